#!/usr/bin/env python3
"""Build the project's compact bundled knowledge graph from the raw FB15k-237 release.

Reads (read-only) the raw material in --source:

    FB15k-237.tar.gz        train/valid/test.txt, `head<TAB>relation<TAB>tail` (Freebase mids)
    entity2text_names.tsv   `mid<TAB>Name`
    entity2text_short.tsv   `mid<TAB>Name -- first sentence of the Wikipedia lead`
    LICENSE.ConvE-MIT.txt   license of the repository the triples come from

and writes into --out (default: data/fb15k237 in the repository):

    triples.tsv.gz          head, relation, tail: unique triples of the plain (non-CVT) relations
    entities.tsv.gz         id, name, description: every entity of a kept triple
    relations.tsv           id, forward, inverse, head_type, tail_type, head_role, tail_role, triples (written by hand below)
    manifest.json           snapshot id, counts, source hashes
    README.md               provenance, quirks, attribution and licenses
    LICENSE.ConvE-MIT.txt   copied verbatim

Everything is deterministic: rows are sorted, gzip members carry no file name and mtime=0, so re-running
the script on the same sources gives byte-identical files. Standard library only.

    python3 scripts/build_bundled_kg.py [--source DIR] [--out DIR]
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import io
import json
import re
import shutil
import sys
import tarfile
import unicodedata
from collections import Counter
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO_ROOT / ".." / "shared" / "data" / "fb15k237"
DEFAULT_OUT = REPO_ROOT / "data" / "fb15k237"

SCRIPT_NAME = "scripts/build_bundled_kg.py"
SOURCE_FILES = ("FB15k-237.tar.gz", "entity2text_names.tsv", "entity2text_short.tsv", "LICENSE.ConvE-MIT.txt")
SPLITS = ("train.txt", "valid.txt", "test.txt")
# The snapshot id is a hash over these files' bytes, concatenated in this order.
DATA_FILES = ("triples.tsv.gz", "entities.tsv.gz", "relations.tsv")
LICENSE_FILE = "LICENSE.ConvE-MIT.txt"

TRIPLES_HEADER = ("head", "relation", "tail")
ENTITIES_HEADER = ("id", "name", "description", "aliases")
RELATIONS_HEADER = ("id", "forward", "inverse", "head_type", "tail_type", "head_role", "tail_role", "triples")

# Locale tags glued onto some names by the source ("Actor-GB", "Denmark-GB", "Yemen-US"); never part of the
# real name. Real names ending in a dash-word ("Hi-NRG", "ABS-CBN", "Waffen-SS", "Me-TV") are untouched.
LOCALE_SUFFIX = re.compile(r"-(?:GB|US)$")
# A description that does not end like this was probably cut short by the source's sentence splitter.
FINISHED_SENTENCE = re.compile(r"[.!?][)\"'\u201d\u2019]*$")

# ---------------------------------------------------------------------------------------------------------
# Hand-written phrases and nouns, one entry per plain relation:
#   id: (forward, inverse, head_type, tail_type, head_role, tail_role)
# - "{head name} {forward} {tail name}." and "{tail name} {inverse} {head name}." read as English sentences.
#   Phrases avoid a bare article before the name slot (names are inserted verbatim: "has the profession
#   Actor", not "is a Actor"); a trailing "the <noun>" is dropped by the question writer when a description
#   ("a genre that ...") takes the name's place.
# - head_type / tail_type: what an entity on that side *is* ("person", not "film director"), one vote each
#   towards the entity's noun (synth.kg.types); "" abstains where the side mixes kinds (Netflix categories
#   hold genres and countries; "entity involved" holds countries, armies and people).
# - head_role / tail_role: the noun that makes "the {role} of {other}" true ("the birthplace of Steve
#   Carell" = tail_role of place_of_birth; "the director of Alien" = head_role of /film/director/film), or "";
#   a role that takes another preposition carries it ("risk factor for").
# Written and reviewed after reading real example triples (with names) for every relation. Notes on
# relations whose meaning is not what the name suggests are in comments.
# ---------------------------------------------------------------------------------------------------------
RELATION_PHRASES: dict[str, tuple[str, str, str, str, str, str]] = {
    # award -> the award family it belongs to ("Grammy Award for Song of the Year" -> "Grammy Awards");
    # 23 of the 181 triples are self-loops on standalone prizes ("Bancroft Prize" -> "Bancroft Prize").
    "/award/award_category/category_of": ("is a category of", "has the category", "award", "award", "category", ""),
    "/award/award_category/disciplines_or_subjects": (
        "honors work in",
        "is a field honored by",
        "award",
        "field",
        "",
        "",
    ),
    # Only one tail in the data: "Sovereign state".
    "/base/aareas/schema/administrative_area/administrative_area_type": (
        "has the administrative area type",
        "is the administrative area type of",
        "",
        "",
        "",
        "",
    ),
    # Countries point at "Earth" (188 triples); heads mix countries, states and counties.
    "/base/aareas/schema/administrative_area/administrative_parent": (
        "is administratively part of",
        "has the administrative subdivision",
        "",
        "",
        "",
        "",
    ),
    "/base/aareas/schema/administrative_area/capital": (
        "has the capital",
        "is the capital of",
        "",
        "city",
        "",
        "capital",
    ),
    # Mostly Rich Little (100 of 150); tails include fictional characters ("Mickey Mouse").
    "/base/americancomedy/celebrity_impressionist/celebrities_impersonated": (
        "has impersonated",
        "has been impersonated by",
        "person",
        "",
        "",
        "",
    ),
    "/base/biblioness/bibs_location/country": (
        "is located in the country",
        "is the country containing",
        "place",
        "country",
        "",
        "",
    ),
    # Tails are mostly US states, also provinces and English counties ("Harlow" -> "Essex").
    "/base/biblioness/bibs_location/state": (
        "is located in the state or region",
        "is the state or region containing",
        "place",
        "",
        "",
        "state or region",
    ),
    # Wars and battles -> states, armies and people that took part.
    "/base/culturalevent/event/entity_involved": ("involved", "was involved in", "conflict", "", "", ""),
    # Only two tails: Vegetarianism, Veganism.
    "/base/eating/practicer_of_diet/diet": ("practices", "is practiced by", "person", "diet", "", ""),
    "/base/locations/continents/countries_within": (
        "contains the country",
        "is a country in",
        "continent",
        "country",
        "",
        "",
    ),
    # Heads are broadcasters (KYMX, MTV, MTV2, Liquid Metal) plus two stray genres.
    "/broadcast/content/artist": ("has played music by", "has had music played on", "", "musical artist", "", ""),
    "/business/business_operation/industry": (
        "operates in the industry",
        "is an industry of",
        "company",
        "industry",
        "",
        "industry",
    ),
    # Freebase curation hint ("this topic was split into that one"), not a fact about the world: noisy pairs
    # such as "Red" -> "Black", "Ian Holm" -> "Ian Somerhalder"; 45 of 113 triples are self-loops.
    "/dataworld/gardening_hint/split_to": (
        "was split in Freebase into the topic",
        "was split off in Freebase from",
        "",
        "",
        "",
        "",
    ),
    # Every triple is a self-loop (institution -> itself).
    "/education/educational_institution/campuses": ("has the campus", "is a campus of", "", "", "", ""),
    "/education/educational_institution/colors": (
        "has the color",
        "is a school color of",
        "school",
        "color",
        "",
        "school color",
    ),
    "/education/educational_institution/school_type": (
        "is a school of the type",
        "is the type of",
        "school",
        "school type",
        "",
        "type",
    ),
    # Every triple is a self-loop (campus -> its institution, the same entity).
    "/education/educational_institution_campus/educational_institution": (
        "is a campus of",
        "has the campus",
        "",
        "",
        "",
        "",
    ),
    # Only three tails: Alpha Delta Pi, Alpha Sigma Phi, Delta Delta Delta.
    "/education/university/fraternities_and_sororities": (
        "has a chapter of",
        "has a chapter at",
        "university",
        "fraternity or sorority",
        "",
        "",
    ),
    "/film/director/film": ("directed", "was directed by", "person", "film", "director", ""),
    "/film/film/cinematography": (
        "was shot by the cinematographer",
        "shot the film",
        "film",
        "person",
        "",
        "cinematographer",
    ),
    "/film/film/costume_design_by": (
        "had costumes designed by",
        "designed the costumes for",
        "film",
        "person",
        "",
        "costume designer",
    ),
    "/film/film/country": ("was made in", "is a country of origin of", "film", "country", "", "country of origin"),
    "/film/film/edited_by": ("was edited by", "edited", "film", "person", "", "editor"),
    "/film/film/executive_produced_by": (
        "was executive produced by",
        "was an executive producer of",
        "film",
        "person",
        "",
        "executive producer",
    ),
    "/film/film/featured_film_locations": (
        "was filmed in",
        "was a filming location for",
        "film",
        "place",
        "",
        "filming location",
    ),
    "/film/film/film_art_direction_by": (
        "had art direction by",
        "was an art director of",
        "film",
        "person",
        "",
        "art director",
    ),
    # Festival editions ("2009 Toronto International Film Festival"); about 1 head in 8 is a person
    # (Ken Loach, Jack Lemmon) or something else, hence the neutral phrasing.
    "/film/film/film_festivals": ("was featured at", "featured", "", "film festival", "", ""),
    "/film/film/film_format": ("was shot on", "was used to shoot", "film", "film format", "", ""),
    "/film/film/film_production_design_by": (
        "had production design by",
        "did the production design for",
        "film",
        "person",
        "",
        "production designer",
    ),
    "/film/film/genre": ("belongs to the genre", "is a genre of", "film", "genre", "", "genre"),
    # Tails are languages (one is "Silent film").
    "/film/film/language": ("is in the language", "is a language of the film", "film", "language", "", "language"),
    "/film/film/music": ("had music by", "composed the music for", "film", "person", "", "composer"),
    # head = the later film, tail = the film before it ("Saw IV" -> "Saw III"); in story order, so
    # "Hannibal" -> "Hannibal Rising".
    "/film/film/prequel": ("has the prequel", "is a prequel to", "film", "film", "sequel", "prequel"),
    "/film/film/produced_by": ("was produced by", "produced", "film", "person", "", "producer"),
    "/film/film/production_companies": (
        "was produced by the company",
        "produced the film",
        "film",
        "company",
        "",
        "production company",
    ),
    # "story by" credit: source authors (Jane Austen, Ian Fleming) and story writers (John Lasseter).
    "/film/film/story_by": ("has a story by", "wrote the story for", "film", "person", "", ""),
    "/film/film/written_by": ("was written by", "wrote", "film", "person", "", "screenwriter"),
    "/film/film_set_designer/film_sets_designed": (
        "designed the sets for",
        "had sets designed by",
        "person",
        "film",
        "set designer",
        "",
    ),
    # Heads are topics of every kind (people, places, sports, events).
    "/film/film_subject/films": ("is a subject of the film", "is about", "", "film", "subject", ""),
    # head was influenced by tail ("Jorge Luis Borges" -> "Walt Whitman"); a few bands among the people.
    "/influence/influence_node/influenced_by": ("was influenced by", "influenced", "person", "person", "", ""),
    "/language/human_language/countries_spoken_in": ("is spoken in", "has speakers of", "language", "country", "", ""),
    "/location/administrative_division/country": (
        "is an administrative division of",
        "has the administrative division",
        "",
        "country",
        "",
        "",
    ),
    "/location/administrative_division/first_level_division_of": (
        "is a first-level division of",
        "has the first-level division",
        "state or province",
        "country",
        "",
        "",
    ),
    # Includes historical capitals ("British Raj" -> "Kolkata", "Union of South Africa" -> 4 cities).
    "/location/country/capital": (
        "has had the capital",
        "has served as the capital of",
        "country",
        "city",
        "",
        "capital",
    ),
    "/location/country/form_of_government": (
        "has the form of government",
        "is the form of government of",
        "country",
        "form of government",
        "",
        "form of government",
    ),
    "/location/country/official_language": (
        "has the official language",
        "is an official language of",
        "country",
        "language",
        "",
        "official language",
    ),
    "/location/country/second_level_divisions": (
        "has the second-level division",
        "is a second-level division of",
        "country",
        "",
        "",
        "",
    ),
    "/location/hud_county_place/county": ("is located in", "includes", "place", "county", "", "county"),
    # Every triple is a self-loop (place -> itself).
    "/location/hud_county_place/place": (
        "is listed by HUD as the place",
        "is listed by HUD as the place",
        "",
        "",
        "",
        "",
    ),
    # Not inverted in the data: head contains tail ("India" -> "Patna").
    "/location/location/contains": ("contains", "is located in", "place", "place", "", ""),
    # Regions -> rivers, mountain ranges and seas that cross them ("Iowa" -> "Mississippi River").
    "/location/location/partially_contains": ("partially contains", "lies partly in", "place", "", "", ""),
    "/location/location/time_zones": (
        "is in the time zone",
        "is a time zone of",
        "place",
        "time zone",
        "",
        "time zone",
    ),
    "/location/us_county/county_seat": (
        "has the county seat",
        "is the county seat of",
        "county",
        "place",
        "",
        "county seat",
    ),
    # Heads are Netflix browsing categories: genres, but also countries and channels ("United Kingdom").
    "/media_common/netflix_genre/titles": ("is a Netflix category for", "is listed on Netflix under", "", "", "", ""),
    "/medicine/disease/notable_people_with_this_condition": ("has affected", "has had", "disease", "person", "", ""),
    # Tails mix conditions, habits and demographics ("Old age", "Tobacco smoking", "Male").
    "/medicine/disease/risk_factors": (
        "has the risk factor",
        "is a risk factor for",
        "disease",
        "",
        "",
        "risk factor for",
    ),
    "/medicine/symptom/symptom_of": ("is a symptom of", "has the symptom", "symptom", "disease", "symptom", ""),
    "/music/artist/origin": (
        "originated in",
        "is the place of origin of",
        "musical artist",
        "place",
        "",
        "place of origin",
    ),
    "/music/genre/artists": (
        "is a genre performed by",
        "performs in the genre",
        "genre",
        "musical artist",
        "genre",
        "",
    ),
    "/music/genre/parent_genre": ("derives from", "is a parent genre of", "genre", "genre", "", "parent genre"),
    "/music/instrument/family": (
        "belongs to the instrument family",
        "is the instrument family of",
        "instrument",
        "instrument family",
        "",
        "",
    ),
    "/music/instrument/instrumentalists": ("is played by", "plays", "instrument", "", "", ""),
    "/music/record_label/artist": ("has signed", "has been signed to", "record label", "musical artist", "", ""),
    "/olympics/olympic_games/participating_countries": (
        "included athletes from",
        "competed in",
        "Olympic Games",
        "country",
        "",
        "",
    ),
    "/olympics/olympic_games/sports": ("included the sport", "was contested at", "Olympic Games", "sport", "", ""),
    "/organization/organization/place_founded": (
        "was founded in",
        "is the founding place of",
        "organization",
        "place",
        "",
        "",
    ),
    # Founders are mostly people, a few countries ("Luxembourg" -> "Council of Europe").
    "/organization/organization_founder/organizations_founded": (
        "founded",
        "was founded by",
        "",
        "organization",
        "founder",
        "",
    ),
    # head = the cause, tail = the person ("Pneumonia" -> "Leonard Bernstein").
    "/people/cause_of_death/people": (
        "caused the death of",
        "died of",
        "cause of death",
        "person",
        "cause of death",
        "",
    ),
    "/people/deceased_person/place_of_burial": (
        "was buried at",
        "is the burial place of",
        "person",
        "place",
        "",
        "burial place",
    ),
    "/people/deceased_person/place_of_death": (
        "died in",
        "is the place of death of",
        "person",
        "place",
        "",
        "place of death",
    ),
    "/people/ethnicity/geographic_distribution": ("is found in", "is home to", "ethnic group", "place", "", ""),
    "/people/ethnicity/languages_spoken": ("speaks", "is spoken by", "ethnic group", "language", "", ""),
    # head = the ethnicity, tail = the person ("Jewish people" -> "Samuel Fuller").
    "/people/ethnicity/people": ("is an ethnicity of", "has the ethnicity", "ethnic group", "person", "ethnicity", ""),
    "/people/person/gender": ("has the gender", "is the gender of", "person", "gender", "", "gender"),
    "/people/person/languages": ("speaks", "is spoken by", "person", "language", "", ""),
    # person -> country of citizenship; tails include England, Scotland, Czechoslovakia.
    "/people/person/nationality": ("is a citizen of", "is the country of citizenship of", "person", "country", "", ""),
    "/people/person/place_of_birth": ("was born in", "is the birthplace of", "person", "place", "", "birthplace"),
    "/people/person/profession": (
        "has the profession",
        "is the profession of",
        "person",
        "profession",
        "",
        "profession",
    ),
    # Tails include Atheism.
    "/people/person/religion": (
        "has the religion or belief",
        "is the religion or belief of",
        "person",
        "religion",
        "",
        "",
    ),
    "/people/profession/specialization_of": (
        "is a specialization of",
        "has the specialization",
        "profession",
        "profession",
        "specialization",
        "",
    ),
    "/sports/sports_team/colors": ("plays in the color", "is a color of", "sports team", "color", "", "team color"),
    "/sports/sports_team/sport": ("plays", "is played by", "sports team", "sport", "", "sport"),
    "/sports/sports_team_location/teams": ("is home to the team", "is based in", "place", "sports team", "home", ""),
    "/time/event/instance_of_recurring_event": (
        "was an edition of",
        "had the edition",
        "event",
        "event",
        "edition",
        "",
    ),
    "/time/event/locations": ("took place in", "was a location of", "event", "place", "", "location"),
    "/tv/tv_program/country_of_origin": (
        "was made in",
        "is the country of origin of",
        "television program",
        "country",
        "",
        "country of origin",
    ),
    "/tv/tv_program/genre": ("belongs to the genre", "is a genre of", "television program", "genre", "", "genre"),
    "/tv/tv_program/languages": (
        "is broadcast in",
        "is a broadcast language of",
        "television program",
        "language",
        "",
        "",
    ),
    "/tv/tv_program/program_creator": ("was created by", "created", "television program", "person", "", "creator"),
    "/user/alexander/philosophy/philosopher/interests": (
        "has worked on",
        "is a field studied by",
        "person",
        "field",
        "",
        "",
    ),
    # Same meaning as /olympics/olympic_games/sports (a user-contributed duplicate).
    "/user/jg/default_domain/olympic_games/sports": (
        "included the sport",
        "was contested at",
        "Olympic Games",
        "sport",
        "",
        "",
    ),
    # Heads: WTO, EU, OECD, NATO.
    "/user/ktrueman/default_domain/international_organization/member_states": (
        "has the member state",
        "is a member of",
        "organization",
        "country",
        "",
        "",
    ),
}


class BuildError(RuntimeError):
    """The sources do not match what this script was written for."""


def is_cvt(relation: str) -> bool:
    """CVT relations pass through an intermediate node and are written as two paths joined by `./`."""
    return "." in relation


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def clean_text(text: str) -> str:
    """One line of plain text: literal escapes undone, tabs and newlines gone, spaces collapsed."""
    text = text.replace('\\"', '"')
    text = re.sub(r"\\[nrt]", " ", text)
    text = re.sub(r"\s+", " ", text).strip()
    # The source's sentence splitter sometimes cut inside an escaped quote, leaving a bare trailing backslash:
    # Giovanni \"Nino\ -> Giovanni "Nino"
    return re.sub(r"\\$", '"', text)


def clean_name(name: str) -> str:
    name = clean_text(name)
    name = name.replace("\\", '"')  # one name uses bare backslashes as quotes: Miles \Tails\ Prower
    return LOCALE_SUFFIX.sub("", name)


def clean_description(text: str) -> str:
    # Some entries carry more lines (literal \n or \r) after the first sentence: extra paragraphs, reviews.
    first_line = re.split(r"\\[nr]|[\r\n]", text, maxsplit=1)[0]
    return clean_text(first_line)


# The subject a Wikipedia lead sentence opens with ("Jeremy John Irons is an English actor."), before its verb.
LEAD_SUBJECT = re.compile(r"^(.{2,80}?),? (?:\([^)]*\) )?(?:is|was|are|were) ")
# What splits a lead subject into several names ("Citigroup Inc. or Citi", "Slovenia, officially the Republic of
# Slovenia").
NAME_SEPARATORS = re.compile(
    r",? (?:or|officially(?: known as| called)?|(?:formerly |)(?:also |commonly |often |better |)(?:known "
    r"as|called)|formerly) "
)
ARTICLE = re.compile(r"^(?:the|a|an) ", re.IGNORECASE)
# "The city of Orange is located in ...": a description of the place, not another name of it.
PLACE_OF = re.compile(r"^(?:the )?(?:city|town|village|borough|township) of ", re.IGNORECASE)


def _plain_words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return ARTICLE.sub("", re.sub(r"[^\w\s]", " ", text).strip()).split()


def _bare_name(text: str) -> str:
    """ "simply EMI" -> "EMI", "romanized as Chungking" -> "Chungking", "the Republic of Yemen" -> "Republic of Yemen"."""
    words = ARTICLE.sub("", text.strip()).split()
    capitalised = next((index for index, word in enumerate(words) if word[:1].isupper() or word[:1].isdigit()), None)
    if capitalised:  # lowercase words before a name are the description's, not the name's
        words = words[capitalised:]
    elif words and words[0] in ("simply", "just"):
        words = words[1:]
    return " ".join(words)


def lead_aliases(name: str, description: str) -> list[str]:
    """Other names of an entity that its description's lead sentence gives: the full name
    ("Jeremy John Irons" for Jeremy Irons) when it contains every word of the name, and the names
    joined by "or" / "officially" ("Citi", "Republic of Slovenia"). Only whole, capitalised-or-plain
    names of at most six words; never the name itself again."""
    match = LEAD_SUBJECT.match(description)
    if not match or '"' in match.group(1):
        return []
    subject = re.sub(r"\s*\([^)]*\)", "", match.group(1)).strip()
    first, *others = NAME_SEPARATORS.split(subject)
    first = first.split(", ")[0].strip()  # post-nominal letters and titles after a comma ("Sarah Ann McLachlan, OC")
    candidates = [first] if set(_plain_words(name)) <= set(_plain_words(first)) else []
    candidates += [_bare_name(other) for other in others]
    aliases: list[str] = []
    for candidate in candidates:
        words = _plain_words(candidate)
        if (
            words
            and len(candidate.split()) <= 6
            and words != _plain_words(name)
            and "|" not in candidate
            and not PLACE_OF.match(candidate)
            and all(words != _plain_words(alias) for alias in aliases)
        ):
            aliases.append(candidate)
    return aliases


def read_triples(tar_path: Path) -> tuple[set[tuple[str, str, str]], Counter[str]]:
    """All unique triples of train+valid+test, and how many lines each split had."""
    triples: set[tuple[str, str, str]] = set()
    lines_per_split: Counter[str] = Counter()
    with tarfile.open(tar_path, "r:gz") as archive:
        members = {Path(m.name).name: m for m in archive.getmembers() if m.isfile()}
        for split in SPLITS:
            if split not in members:
                raise BuildError(f"{tar_path} has no {split} (members: {sorted(members)})")
            handle = archive.extractfile(members[split])
            assert handle is not None
            for number, raw in enumerate(io.TextIOWrapper(handle, encoding="utf-8"), start=1):
                line = raw.rstrip("\n")
                if not line:
                    continue
                parts = line.split("\t")
                if len(parts) != 3 or not all(parts):
                    raise BuildError(f"{split}:{number}: expected head<TAB>relation<TAB>tail, got {line!r}")
                triples.add((parts[0], parts[1], parts[2]))
                lines_per_split[split] += 1
    return triples, lines_per_split


def read_two_columns(path: Path) -> dict[str, str]:
    table: dict[str, str] = {}
    with path.open(encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            line = raw.rstrip("\n")
            if not line:
                continue
            key, sep, value = line.partition("\t")
            if not sep:
                raise BuildError(f"{path.name}:{number}: no tab in {line!r}")
            if key in table:
                raise BuildError(f"{path.name}:{number}: duplicate id {key}")
            table[key] = value
    return table


def tsv_bytes(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> bytes:
    out = io.StringIO(newline="")
    for row in [header, *rows]:
        for cell in row:
            if "\t" in cell or "\n" in cell or "\r" in cell:
                raise BuildError(f"cell would break the TSV: {cell!r}")
        out.write("\t".join(row) + "\n")
    return out.getvalue().encode("utf-8")


def gzip_bytes(data: bytes) -> bytes:
    """Deterministic gzip: no file name, mtime 0, fixed level."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as handle:
        handle.write(data)
    return buffer.getvalue()


def check_phrases(plain_relations: set[str]) -> None:
    missing = sorted(plain_relations - RELATION_PHRASES.keys())
    stale = sorted(RELATION_PHRASES.keys() - plain_relations)
    problems = []
    if missing:
        problems.append("plain relations with no hand-written phrase in RELATION_PHRASES:\n  " + "\n  ".join(missing))
    if stale:
        problems.append("RELATION_PHRASES entries for relations not in the data:\n  " + "\n  ".join(stale))
    for relation, values in sorted(RELATION_PHRASES.items()):
        if len(values) != 6 or not all(isinstance(v, str) and v.strip() == v for v in values) or not all(values[:2]):
            problems.append(f"{relation}: need 6 trimmed strings (forward and inverse non-empty), got {values!r}")
    if problems:
        raise BuildError("\n".join(problems))


def build(source: Path, out: Path) -> dict:
    for name in SOURCE_FILES:
        if not (source / name).is_file():
            raise BuildError(f"missing source file {source / name}")

    triples, lines_per_split = read_triples(source / "FB15k-237.tar.gz")
    names = read_two_columns(source / "entity2text_names.tsv")
    short = read_two_columns(source / "entity2text_short.tsv")

    all_relations = {r for _, r, _ in triples}
    plain_relations = {r for r in all_relations if not is_cvt(r)}
    cvt_relations = all_relations - plain_relations
    check_phrases(plain_relations)

    kept = sorted(t for t in triples if not is_cvt(t[1]))
    dropped_cvt = len(triples) - len(kept)
    entity_ids = sorted({t[0] for t in kept} | {t[2] for t in kept})

    entities = []
    missing_names = [e for e in entity_ids if not clean_name(names.get(e, ""))]
    if missing_names:
        raise BuildError(f"{len(missing_names)} entities have no name, e.g. {missing_names[:5]}")
    suffix_stripped = 0
    for entity in entity_ids:
        raw_name = names[entity]
        name = clean_name(raw_name)
        suffix_stripped += LOCALE_SUFFIX.search(clean_text(raw_name)) is not None
        _, sep, sentence = short.get(entity, "").partition(" -- ")
        description = clean_description(sentence) if sep else ""
        entities.append((entity, name, description, "|".join(lead_aliases(name, description))))
    missing_descriptions = sum(1 for _, _, d, _ in entities if not d)
    unfinished_descriptions = sum(1 for _, _, d, _ in entities if d and not FINISHED_SENTENCE.search(d))
    with_aliases = sum(1 for *_, aliases in entities if aliases)

    per_relation = Counter(r for _, r, _ in kept)
    relations = [
        (relation, *RELATION_PHRASES[relation], str(per_relation[relation])) for relation in sorted(plain_relations)
    ]
    self_loops = Counter(r for h, r, t in kept if h == t)
    degree = Counter(e for h, _, t in kept for e in (h, t))
    entity_names = {e: n for e, n, _, _ in entities}
    hubs = [(entity_names[e], n) for e, n in sorted(degree.items(), key=lambda item: (-item[1], item[0]))[:6]]
    neighbour_named = 0
    descriptions = {e: d.lower() for e, _, d, _ in entities}
    not_loops = [(h, t) for h, _, t in kept if h != t]
    for head, tail in not_loops:
        neighbour_named += (
            entity_names[tail].lower() in descriptions[head] or entity_names[head].lower() in descriptions[tail]
        )

    out.mkdir(parents=True, exist_ok=True)
    payloads = {
        "triples.tsv.gz": gzip_bytes(tsv_bytes(TRIPLES_HEADER, kept)),
        "entities.tsv.gz": gzip_bytes(tsv_bytes(ENTITIES_HEADER, entities)),
        "relations.tsv": tsv_bytes(RELATIONS_HEADER, relations),
    }
    snapshot = hashlib.sha256()
    for name in DATA_FILES:
        (out / name).write_bytes(payloads[name])
        snapshot.update(payloads[name])
    shutil.copyfile(source / LICENSE_FILE, out / LICENSE_FILE)

    manifest = {
        "snapshot_id": "fb15k237-" + snapshot.hexdigest()[:16],
        "snapshot_id_method": "sha256 over the bytes of " + ", ".join(DATA_FILES) + " concatenated in that order",
        "build_script": SCRIPT_NAME,
        "counts": {
            "entities": len(entities),
            "relations": len(relations),
            "triples": len(kept),
            "dropped_cvt_relations": len(cvt_relations),
            "dropped_cvt_triples": dropped_cvt,
            "entities_missing_descriptions": missing_descriptions,
            "entities_with_aliases": with_aliases,
            "descriptions_without_final_punctuation": unfinished_descriptions,
            "self_loop_triples": sum(self_loops.values()),
            "names_locale_suffix_removed": suffix_stripped,
            "triples_with_neighbour_named_in_a_description": neighbour_named,
            "source_unique_triples": len(triples),
            "source_relations": len(all_relations),
            "source_lines": {split: lines_per_split[split] for split in SPLITS},
        },
        "files": {name: hashlib.sha256(payloads[name]).hexdigest() for name in DATA_FILES},
        "source": {
            "dataset": "FB15k-237 (Toutanova & Chen 2015), via the ConvE repository",
            "sha256": {name: sha256_file(source / name) for name in SOURCE_FILES},
        },
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    readme = render_readme(manifest, per_relation, self_loops, hubs, neighbour_named / len(not_loops))
    (out / "README.md").write_text(readme, encoding="utf-8")
    return manifest


def render_readme(
    manifest: dict,
    per_relation: Counter[str],
    self_loops: Counter[str],
    hubs: list[tuple[str, int]],
    neighbour_share: float,
) -> str:
    c = manifest["counts"]
    hub_list = ", ".join(f"{name} {n:,}" for name, n in hubs)
    top = ", ".join(f"`{r}` {n:,}" for r, n in per_relation.most_common(5))
    loops = ", ".join(f"`{r}` {n:,}" for r, n in self_loops.most_common() if n >= 19)
    return f"""# Bundled knowledge graph: FB15k-237, plain relations

The project's default knowledge graph: a real, multi-domain graph (films, people, places, awards, music,
sports) with an English name and a one-sentence description for every entity and hand-written English
phrases for every relation.

| entities | relations | triples | CVT triples left out | entities without a description |
|---:|---:|---:|---:|---:|
| {c["entities"]:,} | {c["relations"]} | {c["triples"]:,} | {c["dropped_cvt_triples"]:,} | {c["entities_missing_descriptions"]} |

Snapshot `{manifest["snapshot_id"]}` (see `manifest.json`).

| file | content |
|---|---|
| `triples.tsv.gz` | `head`, `relation`, `tail`: Freebase mids and relation paths, unique, sorted |
| `entities.tsv.gz` | `id`, `name`, `description`, `aliases` (`|`-separated): every entity of a triple, sorted by id |
| `relations.tsv` | `id`, `forward`, `inverse`, `head_type`, `tail_type`, `head_role`, `tail_role`, `triples`: one row per relation |
| `manifest.json` | snapshot id, counts, sha256 of every output and source file |
| `LICENSE.ConvE-MIT.txt` | license of the repository the triples were obtained from |

Relation phrases: `"{{head name}} {{forward}} {{tail name}}."` and `"{{tail name}} {{inverse}} {{head name}}."`
read as English sentences (`/film/director/film`: "Ridley Scott directed Alien." / "Alien was directed by
Ridley Scott."). `head_type` / `tail_type` say what an entity on each side *is* ("person", not "film
director"): each is one vote towards an entity's noun, decided from all its relations (empty where a side
mixes kinds). `head_role` / `tail_role` make "the {{role}} of {{other}}" true ("the birthplace of Steve
Carell", "the director of Alien"), empty where English has no such noun. Phrases, types and roles were
written and reviewed by hand after reading example triples of each relation; they live in the build
script, which is their single source.

## How it was made

From the project's copy of the FB15k-237 release with entity texts (`FB15k-237.tar.gz`,
`entity2text_names.tsv`, `entity2text_short.tsv`, `LICENSE.ConvE-MIT.txt`; their sha256 are in
`manifest.json`), kept in `shared/data/fb15k237` next to the repository. From the repository root:

    python3 {SCRIPT_NAME} --source ../shared/data/fb15k237 --out data/fb15k237

(both arguments shown are the defaults). Standard library only; re-running gives byte-identical files.

- Triples: train + valid + test ({c["source_unique_triples"]:,} unique triples, {c["source_relations"]}
  relations), keeping the {c["relations"]} plain relations: {c["triples"]:,} triples.
  Largest: {top}.
- Names: `entity2text_names.tsv`, with the locale tag the source glues onto some names removed
  (`Actor-GB` -> `Actor`, `Yemen-US` -> `Yemen`; {c["names_locale_suffix_removed"]} entities).
- Descriptions: the text after ` -- ` in `entity2text_short.tsv`, first line only, escaped quotes undone,
  tabs and newlines removed. {c["entities_missing_descriptions"]} entities have none (empty string).
- Aliases: other names the description's lead sentence gives, so scorers accept them as answers: the
  full name when it holds every word of the name (`Jeremy Irons`: `Jeremy John Irons`, post-nominal
  letters dropped) and names joined by "or" / "officially" (`Citigroup`: `Citigroup Inc.`, `Citi`;
  `Slovenia`: `Republic of Slovenia`); at most six words each. {c["entities_with_aliases"]:,} entities have some.

## What was left out

The {c["dropped_cvt_relations"]} CVT relations and their {c["dropped_cvt_triples"]:,} triples: this version keeps
plain relations only. A CVT relation passes through an intermediate Freebase node (a "compound value
type": an award nomination, a film performance, a team roster entry) and is written as two paths joined
by a dot, e.g. `/award/award_nominee/award_nominations./award/award_nomination/award`. FB15k-237 collapses
such a path into one edge between its two ends and drops the intermediate node with its qualifiers (year,
role, category), so the edge is often vague, or true only under a qualifier that is no longer there.
They may be added in a later version.

## Quirks to know

- **Only one direction is stored.** FB15k-237 removed inverse relations: `/film/director/film` exists,
  "directed by" does not. Walkers must traverse edges in both directions; `inverse` phrases each edge read
  backwards.
- **Hub entities.** A few countries, genders, languages, professions and genres touch thousands of edges.
  Triples per entity: {hub_list}. Questions walking through hubs are ambiguous; rare and mid-degree
  entities make better seeds.
- **Descriptions rarely name the neighbour.** For only {neighbour_share:.0%} of the triples (self-loops
  aside) does either end's description contain the other end's name (under 1% for `/film/film/language`, 2% for
  `/people/person/place_of_birth`). Evidence for a hop has to be generated from the triples.
- **Descriptions are sometimes cut short** by the source's sentence splitter (`Thomas Daniel "Tim"`,
  `Star Trek:`, `Jerry`): {c["descriptions_without_final_punctuation"]} descriptions do not end with a
  full stop, question or exclamation mark. A few are review blurbs or describe a different entity. Names are not
  unique (several `Comedy` genres, towns called `Albany`): always key on the id.
- **Self-loops.** {c["self_loop_triples"]:,} triples have head == tail. Three relations consist only of
  self-loops (campuses, HUD places), others have some: {loops}. Walkers should skip them.
- **`/dataworld/gardening_hint/split_to`** is a Freebase curation hint (a topic split into others), not a fact
  about the world, and its pairs are noisy. `/user/jg/default_domain/olympic_games/sports` duplicates
  `/olympics/olympic_games/sports`.
- Some heads or tails are not the kind the relation suggests (persons among the films of
  `/film/film/film_festivals`, countries among Netflix genres); such sides have an empty type and do not vote on an entity's noun.

## Attribution and licenses

- **FB15k-237**: Kristina Toutanova and Danqi Chen, "Observed versus latent features for knowledge base
  completion", 3rd Workshop on Continuous Vector Space Models and their Compositionality, 2015.
- **Freebase**: the triples and entity ids are derived from Freebase data by Google, released under
  CC BY 2.5 (https://creativecommons.org/licenses/by/2.5/).
- **Wikipedia**: entity names and descriptions are derived from Wikipedia text by Wikipedia contributors,
  licensed CC BY-SA (https://creativecommons.org/licenses/by-sa/3.0/; later versions permit reuse under 4.0).
- **ConvE**: the triples were obtained via the ConvE repository (Dettmers et al.,
  https://github.com/TimDettmers/ConvE), MIT license, copied here as `LICENSE.ConvE-MIT.txt`.

Because they contain Wikipedia-derived text, the derived files in this folder (`triples.tsv.gz`,
`entities.tsv.gz`, `relations.tsv`, `manifest.json`, this README) are shared under CC BY-SA 4.0, with the
attributions above. The relation phrases and types are original work of the project, also shared under
CC BY-SA 4.0 as part of these files.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source",
        type=Path,
        default=DEFAULT_SOURCE,
        help="folder with the raw FB15k-237 files (default: ../shared/data/fb15k237 from the repo root)",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="output folder (default: data/fb15k237 in the repo)"
    )
    args = parser.parse_args(argv)
    try:
        manifest = build(args.source.resolve(), args.out)
    except BuildError as error:
        print(f"build_bundled_kg: error: {error}", file=sys.stderr)
        return 1
    counts = manifest["counts"]
    print(
        f"{manifest['snapshot_id']}: {counts['entities']} entities, {counts['relations']} relations, "
        f"{counts['triples']} triples ({counts['dropped_cvt_triples']} CVT triples left out) -> {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A work's or a person's country as its own description gives it: co-producing countries a reader
would deny ("Shine was made in New Zealand" for a 1996 Australian film) and a second citizenship
the lead contradicts while it gives another ("Christopher Reeve is a citizen of France" for "an
American actor") leave the graph walks use, while facts the lead agrees with, or gives no verdict
on, stay, and no person loses every country."""

import numpy as np

from synth.kg.described_countries import Demonyms, contradicted_countries, lead_words
from synth.kg.graph import KnowledgeGraph
from synth.kg.types import EntityTypes
from synth.schemas import Entity, Relation, Triple

RELATIONS = {
    "country": Relation(
        id="country", forward="was made in", inverse="is a country of origin of", head_type="film", tail_type="country"
    ),
    "nationality": Relation(
        id="nationality",
        forward="is a citizen of",
        inverse="is the country of citizenship of",
        head_type="person",
        tail_type="country",
    ),
    "contains": Relation(
        id="contains", forward="contains", inverse="is contained by", head_type="country", tail_type="country"
    ),
}


def _graph() -> KnowledgeGraph:
    """Five American films, four Australian ones and four British ones teach the words; then the cases."""
    entities = {
        "/usa": Entity(id="/usa", name="United States of America"),
        "/aus": Entity(id="/aus", name="Australia"),
        "/nz": Entity(id="/nz", name="New Zealand"),
        "/uk": Entity(id="/uk", name="United Kingdom"),
        "/sco": Entity(id="/sco", name="Scotland"),
        "/bra": Entity(id="/bra", name="Brazil"),
    }
    triples = [Triple(head="/uk", relation="contains", tail="/sco")]
    for number, (country, word) in enumerate(
        [("/usa", "American")] * 5 + [("/aus", "Australian")] * 4 + [("/uk", "British")] * 4
    ):
        film = f"/f/{number}"
        entities[film] = Entity(
            id=film, name=f"Film {number}", description=f"Film {number} is a 2001 {word} drama film."
        )
        triples.append(Triple(head=film, relation="country", tail=country))
    cases = {
        "/shine": ("Shine", "Shine is a 1996 Australian biographical drama film.", ["/aus", "/nz"]),
        "/coprod": ("Coprod", "Coprod is a 2003 American action film.", ["/usa", "/nz"]),
        "/scottish": ("Red Road", "Red Road is a 2006 British film.", ["/sco"]),
        "/kiss": ("Kiss", "Kiss is a 1985 Brazilian-American drama film.", ["/bra", "/usa"]),
        "/silent": ("Silent", "", ["/nz"]),
        "/language": ("Talk", "Talk is an English-language film.", ["/usa"]),
    }
    for film, (name, description, countries) in cases.items():
        entities[film] = Entity(id=film, name=name, description=description)
        triples += [Triple(head=film, relation="country", tail=country) for country in countries]
    people = {
        "/keanu": ("Keanu", "Keanu is a Canadian actor.", ["/nz"]),
        "/reeve": ("Reeve", "Reeve was an American actor.", ["/usa", "/nz"]),
        "/both": ("Both", "Both is a British-American rapper.", ["/uk", "/usa"]),
    }
    for person, (name, description, countries) in people.items():
        entities[person] = Entity(id=person, name=name, description=description)
        triples += [Triple(head=person, relation="nationality", tail=country) for country in countries]
    return KnowledgeGraph.from_triples(triples, entities, RELATIONS, "origins")


def _dropped(kg: KnowledgeGraph) -> set[tuple[str, str]]:
    heads, _, tails = kg.edges()
    mask = contradicted_countries(kg, EntityTypes(kg))
    return {(kg.node_ids[heads[edge]], kg.node_ids[tails[edge]]) for edge in np.flatnonzero(mask)}


def test_countries_the_lead_does_not_give_are_dropped_and_the_rest_kept():
    dropped = _dropped(_graph())
    assert ("/shine", "/nz") in dropped and ("/coprod", "/nz") in dropped
    assert ("/shine", "/aus") not in dropped and ("/coprod", "/usa") not in dropped
    assert ("/scottish", "/sco") not in dropped  # Scotland lies in the United Kingdom a "British" lead names
    assert not {fact for fact in dropped if fact[0] in {"/kiss", "/silent", "/language"}}  # no verdict
    assert ("/reeve", "/nz") in dropped and ("/reeve", "/usa") not in dropped  # the lead gives the other one
    assert ("/keanu", "/nz") not in dropped  # a person keeps a country when the lead gives none of theirs
    assert not {fact for fact in dropped if fact[0] == "/both"}  # the lead gives both
    assert len(dropped) == 3


def test_the_words_are_learned_from_the_graph():
    kg = _graph()
    demonyms = Demonyms(kg, EntityTypes(kg))
    assert {kg.node_ids[node] for node in demonyms.countries["American"]} == {"/usa"}
    assert {kg.node_ids[node] for node in demonyms.countries["Australian"]} == {"/aus"}
    assert "Brazilian" not in demonyms.countries  # one holder: too rare to learn, so "Kiss" gets no verdict


def test_lead_words_skip_languages_and_the_own_name():
    assert lead_words("Z is a 1969 French-language political thriller.", "Z") == set()
    assert lead_words("Troy is a 2004 British-Maltese epic war film.", "Troy") == {"British", "Maltese"}
    assert lead_words("American Beauty is an American drama film.", "American Beauty") == set()
    assert lead_words("No article here.", "X") == set()
    assert lead_words("Frank Capra was an Italian-born American film director.", "Frank Capra") == {"American"}

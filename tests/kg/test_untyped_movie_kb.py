"""A movie KB as MetaQA ships one: pipe-separated `film|relation|value` lines, names as ids, no entity
table, no relation table, no types, a name that is both a film and a genre, and two films of one title
(merged into one node by the ids). Questions about it must still know a person from a film ("Who
..."), rarely fall back to "something", never go through a node that is two things, and stay unique
in a larger world."""

import random
from pathlib import Path

import pytest

from synth.errors import ConfigError
from synth.kg.importer import ImportSource, import_graph
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

FIRST = "Ada Ben Cora Dan Eva Finn Gus Hana Ivo Jude Kai Lena Milo Nora Otis Pia Quin Rosa Saul Tess".split()
LAST = "Moreau Okafor Lindqvist Tanaka Ferreira Novak Haddad Brennan Castillo Weiss".split()
ADJECTIVES = "Silent Crimson Hollow Distant Broken Golden Quiet Northern Paper Iron Glass Winter".split()
NOUNS = "Harbor Meridian Valley Compass Lantern River Garden Signal Orchard Tide Canal Bells Ferry Atlas".split()
GENRES = ["Drama", "Comedy", "Western", "Thriller", "Romance", "Documentary", "Noir", "Musical", "Broken Arrow"]
LANGUAGES = ["English", "French", "German", "Spanish", "Japanese", "Hindi"]
TWIN = "Crimson Harbor"
"""The title of two films."""


def movie_kb(folder: Path, seed: int = 0) -> Path:
    """About 160 films (one of them "Broken Arrow", also a genre; two of them TWIN), 200 people,
    genres, languages, years and tags, written as MetaQA writes its KB."""
    rng = random.Random(seed)
    people = [f"{first} {last}" for first in FIRST for last in LAST]
    titles = [f"{adjective} {noun}" for adjective in ADJECTIVES for noun in NOUNS]
    rng.shuffle(titles)
    titles.remove(TWIN)
    films = [*titles[:158], TWIN, "Broken Arrow"]
    lines = []
    for film in [*films, TWIN]:  # TWIN twice: a second film of that title
        lines.append(f"{film}|directed_by|{rng.choice(people[:60])}")
        for writer in rng.sample(people[40:120], rng.choice([1, 1, 2])):
            lines.append(f"{film}|written_by|{writer}")
        for actor in rng.sample(people[80:], rng.randint(2, 4)):
            lines.append(f"{film}|starred_actors|{actor}")
        for genre in rng.sample(GENRES[:-1], rng.choice([1, 1, 2])):
            lines.append(f"{film}|has_genre|{genre}")
        lines.append(f"{film}|in_language|{rng.choice(LANGUAGES)}")
        lines.append(f"{film}|release_year|{rng.randint(1950, 2020)}")
        lines.append(f"{film}|has_tags|{rng.choice(['classic', 'cult', 'slow', 'atmospheric'])}")
    lines += [f"{film}|has_genre|Broken Arrow" for film in films[:12]]  # the genre, named like the film
    path = folder / "kb.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    home = tmp_path_factory.mktemp("untyped_movies")
    settings = Settings(home=home)
    source = ImportSource(movie_kb(home), delimiter="|", columns=("head", "relation", "tail"))
    import_graph("movies", source, settings.kg_path)
    return settings


def test_fifty_items_ask_who_about_people_rarely_say_something_and_avoid_the_merged_node(imported):
    # a small random graph: most walks dead-end, and a quarter of the constructions have known rivals
    params = ["world.kg=movies", "n=50", "hops=[2,3]", "seed=1", "panel.enabled=false", "max_attempts_per_item=400"]
    result = generate(imported, "multihop", params)
    items = list(iter_records(imported, result.version, "items"))
    assert len(items) == 50
    something = [item.question for item in items if "something" in item.question or "someone" in item.question]
    assert len(something) < 0.1 * len(items), something
    people = {line.split("|")[2] for line in (imported.home / "kb.txt").read_text().splitlines()} - set(GENRES)
    for item in items:
        if item.answer_entity_id in people and not item.answer_entity_id[0].isdigit():
            assert item.question.startswith("Who") or " person" in item.question, item.question
        involved = {c.anchor for c in item.constraints} | {entity for c in item.constraints for entity in c.named}
        involved |= {hop.head for hop in item.path} | {hop.tail for hop in item.path}
        assert "Broken Arrow" not in involved, item.question
        assert TWIN not in involved, item.question
        assert item.metadata["world"]["answers"] <= 1
    funnel = {stage.stage: stage.dropped for stage in result.version.funnel}
    assert funnel["types"].get("incompatible_roles", 0) > 0  # the merged node came up, and was kept out


def test_an_entity_table_keyed_by_other_ids_is_refused_in_one_line(tmp_path):
    kb = movie_kb(tmp_path)
    films = sorted({line.split("|")[0] for line in kb.read_text().splitlines()})
    table = tmp_path / "entities.txt"
    table.write_text("id|name|description\n" + "".join(f"{1975 + n}|{film}|A film.\n" for n, film in enumerate(films)))
    source = ImportSource(kb, entities=table, delimiter="|", columns=("head", "relation", "tail"))
    with pytest.raises(ConfigError, match=r"only \d+ of its 160 entity ids match .* --entities-join name") as error:
        import_graph("movies", source, tmp_path / "kg")
    assert "\n" not in str(error.value)
    report = import_graph(
        "movies",
        ImportSource(kb, entities=table, delimiter="|", columns=("head", "relation", "tail"), entities_join="name"),
        tmp_path / "kg",
    )
    assert report.entities == 160


def test_two_films_of_one_title_are_one_node_that_questions_keep_away_from(imported):
    from synth.kg.snapshot import load_kg
    from synth.kg.types import EntityTypes

    types = EntityTypes(load_kg("movies", imported.kg_path))
    assert types.conflicted(TWIN) and types.doubled(TWIN)  # two release years, two directors
    films = {line.split("|")[0] for line in (imported.home / "kb.txt").read_text().splitlines()}
    others = sorted(films - {TWIN, "Broken Arrow"})
    assert not any(types.conflicted(film) for film in others)

"""A movie KB shaped like MetaQA's (`film|relation|value`, names as ids, no entity table) with a
relation file: it imports, makes items phrased by the file, and never walks through a value."""

from pathlib import Path

import pytest

from synth.errors import ConfigError
from synth.kg.importer import VALUE_PREFIX, ImportSource, import_graph
from synth.kg.store import load_graph
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

MOVIES = Path(__file__).resolve().parents[1] / "fixtures" / "movie_kb"
LITERAL = {"release_year", "has_tags", "has_imdb_rating"}


@pytest.fixture(scope="module")
def settings(tmp_path_factory):
    settings = Settings(home=tmp_path_factory.mktemp("movies_home"))
    report = import_graph(
        "movies", ImportSource(MOVIES / "triples.txt", relations=MOVIES / "relations.tsv"), settings.kg_path
    )
    assert set(report.literal_relations) == LITERAL and report.entities == 0 and report.unnamed_entities > 50
    return settings


def test_values_are_their_own_nodes_and_ids_stand_in_for_names(settings):
    kg = load_graph(settings.kg_path / "movies.duckdb")
    assert kg.name("1981") == "1981" and kg.neighbors("1981", "directed_by", "forward")  # the film
    assert kg.name(f"{VALUE_PREFIX}1981") == "1981" and kg.neighbors(f"{VALUE_PREFIX}1981", "release_year", "inverse")
    assert kg.relations["starred_actors"].inverse == "starred in" and kg.relations["release_year"].literal


def test_items_use_the_relation_files_phrases_and_never_walk_a_value(settings):
    # 96 nodes: every many-valued step of so small a graph is open in any larger world, so the world
    # check would refuse all (tests/kg/test_untyped_movie_kb.py runs it on a larger movie KB); this
    # test is about phrases and values
    params = ["world.kg=movies", "n=12", "hops=[2,3]", "seed=2", "panel.enabled=false", "multiplicity.enabled=false"]
    result = generate(settings, "multihop", params)
    items = list(iter_records(settings, result.version, "items"))
    assert len(items) == 12
    phrases = (
        "was directed by",
        "directed",
        "was written by",
        "wrote",
        "starred",
        "director",
        "screenwriter",
        "genre",
        "language",
        "released in",
        "is tagged",
        "is rated",
    )
    assert all(any(phrase in item.question for phrase in phrases) for item in items)
    assert not any("target of" in item.question or "entity" in item.question for item in items)
    for item in items:
        assert not {hop.relation for hop in item.path} & LITERAL, item.question
        walked = [hop.tail if hop.direction == "forward" else hop.head for hop in item.path]
        assert not any(entity.startswith(VALUE_PREFIX) for entity in walked)


def test_a_graph_whose_only_edges_are_values_says_why_no_walk_starts(tmp_path):
    (tmp_path / "t.txt").write_text("".join(f"Film {i}|release_year|{1980 + i}\n" for i in range(30)))
    settings = Settings(home=tmp_path / "home")
    import_graph("years", ImportSource(tmp_path / "t.txt"), settings.kg_path)
    with pytest.raises(ConfigError, match="walkable edges.*release_year"):
        generate(settings, "multihop", ["world.kg=years", "n=2", "panel.enabled=false"])

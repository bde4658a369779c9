"""What readers taught the world estimate and the phrasing: relations listed in part (a country's
capitals), a floor that spares hopeless constructions, and films named with their year."""

import pytest

from synth.errors import ConfigError
from synth.generators.kg_walk import Walk
from synth.generators.reverse import ConstructConfig, ReverseConstructor
from synth.generators.templates import TemplateVerbalizer
from synth.kg.display import shown_name
from synth.kg.graph import KnowledgeGraph
from synth.kg.multiplicity import WorldConfig, WorldModel
from synth.kg.relation_profile import read_overrides
from synth.schemas import Constraint, Entity, Hop, Relation, Step, Triple

COUNTRIES = [f"/c/{number}" for number in range(12)]


def _capitals_graph() -> KnowledgeGraph:
    """Twelve countries with one capital each, and films made in them (a film has one composer)."""
    triples = [Triple(head=country, relation="capital", tail=f"{country}-city") for country in COUNTRIES]
    triples += [Triple(head=f"/f/{n}", relation="music", tail=f"/p/{n % 5}") for n in range(20)]
    entities = {country: Entity(id=country, name=f"Country {country[3:]}") for country in COUNTRIES}
    entities |= {f"{country}-city": Entity(id=f"{country}-city", name=f"City {country[3:]}") for country in COUNTRIES}
    entities |= {f"/f/{n}": Entity(id=f"/f/{n}", name=f"Film {n}") for n in range(20)}
    entities |= {f"/p/{n}": Entity(id=f"/p/{n}", name=f"Composer {n}") for n in range(5)}
    entities["/f/0"] = Entity(
        id="/f/0", name="Legend", description="Legend is a 1985 British-American fantasy adventure film."
    )
    relations = {
        "capital": Relation(
            id="capital",
            forward="has had the capital",
            inverse="has served as the capital of",
            head_type="country",
            tail_type="city",
        ),
        "music": Relation(
            id="music",
            forward="had music by",
            inverse="composed the music for",
            head_type="film",
            tail_type="composer",
        ),
    }
    return KnowledgeGraph.from_triples(triples, entities, relations, "capitals")


def _world(graph: KnowledgeGraph, tmp_path, overrides: str = "") -> WorldModel:
    """The world model with an override file of these lines."""
    path = tmp_path / "relation_overrides.yaml"
    path.write_text(overrides)
    return WorldModel(graph, WorldConfig(relation_overrides=path))


def test_a_relation_listed_in_part_counts_the_values_a_reader_knows(tmp_path):
    graph = _capitals_graph()
    capital_of = Constraint(anchor=COUNTRIES[0], steps=[Step(relation="capital")])
    plain = _world(graph, tmp_path)
    assert plain.bounded("capital", "forward") and plain.answers([capital_of]) == 1
    listed_in_part = _world(graph, tmp_path, "capital: {world_values: 2}\n")
    assert listed_in_part.factor("capital", "forward") == 2 and listed_in_part.answers([capital_of]) == 2
    assert listed_in_part.factor("capital", "inverse") == 1  # a city was the capital of one country


def test_a_walk_no_cue_could_make_unique_is_hopeless_before_construction(tmp_path):
    graph = _capitals_graph()
    world = _world(graph, tmp_path)
    constructor = ReverseConstructor(graph, ConstructConfig(), world=world)
    # composer -> films: many-valued into an open class; the film's only other fact is its composer
    walk = Walk(("/p/1", "/f/1"), (Hop(head="/f/1", relation="music", tail="/p/1", direction="inverse"),))
    assert constructor.world_floor(walk) > world.config.max_answers
    # film -> composer: bounded, one value; the floor allows it
    walk = Walk(("/f/1", "/p/1"), (Hop(head="/f/1", relation="music", tail="/p/1"),))
    assert constructor.world_floor(walk) <= world.config.max_answers


def test_a_named_film_carries_its_year_and_never_a_possessive():
    graph = _capitals_graph()
    verbalizer = TemplateVerbalizer(graph)
    assert shown_name(verbalizer.types, "/f/0") == "Legend (1985)"
    assert shown_name(verbalizer.types, "/f/1") == "Film 1"  # no description, no year
    assert shown_name(verbalizer.types, "/p/0") == "Composer 0"
    clause = verbalizer.clause(Constraint(anchor="/f/0", steps=[Step(relation="music")]))
    assert "Legend (1985)" in clause and "(1985)'s" not in clause


@pytest.mark.parametrize("values", [0.5, "two", True])
def test_world_values_below_one_or_not_a_number_is_refused_in_one_line(tmp_path, values):
    path = tmp_path / "relation_overrides.yaml"
    path.write_text(f"/film/film/music:\n  world_values: {values}\n")
    with pytest.raises(ConfigError, match="world_values must be a number of at least 1"):
        read_overrides(path)

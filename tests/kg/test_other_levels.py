"""A reader takes a place at any level: a producer the graph lists as dying in New York City may
have died in Manhattan, and one listed in Manhattan died in New York City. `WorldModel.rivals` weighs
such candidates (Herbert Ross beside Arthur Laurents, round 33: both produced The Turning Point and
died in Manhattan; the graph lists Ross's death in New York City)."""

from named_graph import named_graph

from synth.kg.graph import KnowledgeGraph
from synth.kg.multiplicity import WorldConfig, WorldModel
from synth.schemas import Constraint, Step, Triple


def _graph() -> KnowledgeGraph:
    """A city with two districts; a film produced by one person who died in a district and one listed
    as dying in the city; two more people listed below the city, one in each district."""
    triples = [Triple(head="/city", relation="contains", tail=f"/district/{n}") for n in (0, 1)]
    triples += [Triple(head="/film", relation="produced_by", tail=person) for person in ("/laurents", "/ross")]
    triples += [Triple(head="/laurents", relation="died_in", tail="/district/0")]
    triples += [Triple(head="/ross", relation="died_in", tail="/city")]
    triples += [Triple(head="/other/0", relation="died_in", tail="/district/0")]
    triples += [Triple(head="/other/1", relation="died_in", tail="/district/1")]
    triples += [Triple(head=f"/film/{n}", relation="produced_by", tail=f"/other/{n}") for n in (0, 1)]
    return named_graph(triples, "levels")


PRODUCERS = Constraint(anchor="/film", steps=[Step(relation="produced_by")])


def _died_in(place: str) -> Constraint:
    return Constraint(anchor=place, steps=[Step(relation="died_in", direction="inverse")])


def _world(tmp_path, read_containers: bool) -> WorldModel:
    overrides = tmp_path / "relation_overrides.yaml"
    overrides.write_text("contains:\n  transitive: true\n")
    config = WorldConfig(scale=10, audit_flags=False, relation_overrides=overrides, read_containers=read_containers)
    return WorldModel(_graph(), config)


def test_a_candidate_listed_at_the_containing_place_weighs_as_the_share_listed_below_it_there(tmp_path):
    question = [PRODUCERS, _died_in("/district/0")]
    read = _world(tmp_path, read_containers=True)
    # below the city the graph lists two deaths in district 0 and one in district 1
    assert read._other_level(read.kg.node_index["/ross"], read.states(question[1])[0].frontier, question[1].steps[0])
    assert read.rivals(question, "/laurents") >= 2 / 3
    assert _world(tmp_path, read_containers=False).rivals(question, "/laurents") < 0.1


def test_a_candidate_listed_inside_the_asked_place_is_certain(tmp_path):
    question = [PRODUCERS, _died_in("/city")]
    read = _world(tmp_path, read_containers=True)
    assert read.rivals(question, "/ross") >= 1.0
    assert _world(tmp_path, read_containers=False).rivals(question, "/ross") < 0.1


def test_a_place_elsewhere_adds_nothing(tmp_path):
    question = [PRODUCERS, _died_in("/district/1")]
    read = _world(tmp_path, read_containers=True)
    # Laurents died in the other district: no level of district 1
    assert (
        read._other_level(read.kg.node_index["/laurents"], read.states(question[1])[0].frontier, question[1].steps[0])
        == 0
    )

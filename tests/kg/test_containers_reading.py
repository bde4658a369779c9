"""A many-valued step from a place reaches, in the world, what it reaches from the places containing
it too: a reader takes "a film shot in Manhattan" for one shot in New York City, where the graph
lists far more (`WorldConfig.read_containers`; docs/audit.md, round 29)."""

from named_graph import named_graph

from synth.kg.graph import KnowledgeGraph
from synth.kg.multiplicity import WorldConfig, WorldModel
from synth.schemas import Constraint, Step, Triple


def _graph() -> KnowledgeGraph:
    """A city containing three districts; twenty films shot in the city, two in one district, eight
    elsewhere; a person born in that district."""
    triples = [Triple(head="/city", relation="contains", tail=f"/district/{n}") for n in range(3)]
    triples += [Triple(head=f"/film/{n}", relation="shot_in", tail="/city") for n in range(20)]
    triples += [Triple(head=f"/film/{n}", relation="shot_in", tail="/district/0") for n in (20, 21)]
    triples += [Triple(head=f"/film/{n}", relation="shot_in", tail=f"/elsewhere/{n}") for n in range(22, 30)]
    triples += [Triple(head="/person", relation="born_in", tail="/district/0")]
    return named_graph(triples, "districts")


CHAIN = Constraint(anchor="/person", steps=[Step(relation="born_in"), Step(relation="shot_in", direction="inverse")])


def _world(graph: KnowledgeGraph, tmp_path, read_containers: bool) -> WorldModel:
    overrides = tmp_path / "relation_overrides.yaml"
    overrides.write_text("contains:\n  transitive: true\n")
    config = WorldConfig(scale=10, audit_flags=False, relation_overrides=overrides, read_containers=read_containers)
    return WorldModel(graph, config)


def test_films_shot_in_a_district_are_read_as_those_shot_in_its_city(tmp_path):
    graph = _graph()
    read = _world(graph, tmp_path, read_containers=True)
    literal = _world(graph, tmp_path, read_containers=False)
    assert literal.set_size(CHAIN)[0] == 2 * 10  # the district's two films, scale times over
    assert read.set_size(CHAIN)[0] == 22 * 10  # and the city's twenty
    # the graph's own answers stay the district's films
    assert graph.ids(read.states(CHAIN)[-1].frontier) == {"/film/20", "/film/21"}

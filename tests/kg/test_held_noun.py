"""A relation that declares no noun for a side (FB15k-237's "has the capital" of an administrative
area) describes the entities it reaches by the noun the graph's entities on that side share ("A place
has this city as its capital"), not "Something" (2 of 90 rated 5-6 hop items, rounds 30-32)."""

import numpy as np
from named_graph import named_graph

from generators.templates import TemplateVerbalizer
from synth.kg.graph import FORWARD, INVERSE
from synth.kg.types import EntityTypes
from synth.schemas import Relation, Step, Triple

RELATIONS = {
    "capital": Relation(id="capital", forward="has the capital", inverse="is the capital of", tail_type="city"),
    "contains": Relation(id="contains", forward="contains", inverse="is located in", head_type="state"),
    "in_zone": Relation(id="in_zone", forward="is in", inverse="holds", head_type="city", tail_type="time zone"),
}


def _graph():
    triples = [Triple(head=f"/state/{n}", relation="capital", tail=f"/city/{n}") for n in range(4)]
    triples += [Triple(head=f"/state/{n}", relation="contains", tail=f"/city/{n}") for n in range(4)]
    triples += [Triple(head=f"/city/{n}", relation="in_zone", tail="/zone") for n in range(4)]
    triples += [Triple(head="/region", relation="capital", tail="/city/9")]  # a holder with no noun of its own
    return named_graph(triples, "capitals", RELATIONS)


def test_the_undeclared_side_takes_the_broad_noun_its_holders_share():
    types = EntityTypes(_graph())
    assert types.side_noun("capital", FORWARD) == ""
    assert types.held_noun("capital", FORWARD) == "place"  # states, broadly places
    assert types.held_noun("capital", INVERSE) == ""  # declared: cities
    assert types.held_noun("in_zone", INVERSE) == ""


def test_a_set_reached_over_it_is_a_place_not_something():
    graph = _graph()
    verbalizer = TemplateVerbalizer(graph)
    region = np.array([graph.node_index["/region"]], dtype=np.int32)
    assert verbalizer.types.noun("/region") is None
    assert verbalizer.set_noun(region, Step(relation="capital", direction="inverse")) == "place"

"""The compact KnowledgeGraph answers like the plain graph it stands for."""

import random

import networkx as nx
import numpy as np
import pytest

from synth.generators.kg_walk import RandomWalker, WalkConfig
from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph, intersect
from synth.schemas import Entity, Relation, Step, Triple

TRIPLES = [("b", "r1", "c"), ("a", "r1", "c"), ("a", "r2", "b"), ("a", "r1", "c"), ("c", "r2", "a"), ("a", "r1", "b")]


def graph() -> KnowledgeGraph:
    relations = {name: Relation(id=name, forward=f"{name}s", inverse=f"is {name} of") for name in ("r1", "r2")}
    entities = {name: Entity(id=name, name=name.upper()) for name in ("a", "b")}
    heads, rels, tails = zip(*TRIPLES)
    return KnowledgeGraph.from_arrays(list(heads), list(rels), list(tails), entities, relations, "t")


def test_lookups_are_sorted_and_duplicates_count_once():
    kg = graph()
    assert kg.num_triples == 5 and kg.node_ids == ["a", "b", "c"]
    assert kg.neighbors("a", "r1", FORWARD) == ["b", "c"]
    assert kg.neighbors("c", "r1", INVERSE) == ["a", "b"]
    assert kg.neighbors("a", "r9", FORWARD) == [] and kg.neighbors("zz", "r1", FORWARD) == []
    assert kg.incident("a") == [("r1", FORWARD), ("r2", FORWARD), ("r2", INVERSE)]
    assert [kg.degree(node) for node in "abc"] == [4, 3, 3]
    assert kg.has_edge("c", "r2", "a") and not kg.has_edge("a", "r2", "c")
    assert kg.follow("a", [Step(relation="r1", direction=FORWARD), Step(relation="r2", direction=FORWARD)]) == {"a"}
    assert kg.name("c") == "c" and kg.name("a") == "A"
    assert list(kg.named) == [True, True, False]


def test_the_networkx_view_holds_the_same_edges():
    kg = graph()
    assert isinstance(kg.graph, nx.MultiDiGraph)
    assert sorted(kg.graph.edges(keys=True)) == sorted({(head, tail, relation) for head, relation, tail in TRIPLES})
    assert sorted(kg.triples()) == sorted(set(TRIPLES))


def test_walks_respect_hubs_names_and_distinct_relations():
    kg = graph()
    walker = RandomWalker(kg, WalkConfig(min_seed_degree=1, max_seed_degree=10, max_degree=10), random.Random(0))
    for _ in range(50):
        walk = walker.walk(1)
        assert walk is not None and set(walk.entities) <= {"a", "b"}  # c has no name: never stepped onto
        assert kg.has_edge(walk.hops[0].head, walk.hops[0].relation, walk.hops[0].tail)
    assert walker.walk(3) is None  # only two named nodes: a 3-hop walk without repeats cannot exist
    assert not walker._visited.any()  # reset after every walk, finished or not


def test_a_view_without_some_relations_keeps_numbering_and_drops_only_their_edges():
    kg = graph()
    view = kg.without_relations(["r2", "unknown"])
    assert view.node_ids == kg.node_ids and view.snapshot == kg.snapshot
    assert sorted(view.triples()) == sorted({triple for triple in TRIPLES if triple[1] != "r2"})
    assert list(view.degrees) == [2, 2, 2]
    assert kg.without_relations([]) is kg


def test_longest_policy_backtracks_to_full_length_simple_chains():
    from synth.kg.snapshot import load_snapshot

    kg = load_snapshot()
    random_walker = RandomWalker(kg, WalkConfig(), random.Random(5))
    longest_walker = RandomWalker(kg, WalkConfig(policy="longest"), random.Random(5))
    random_full = sum(random_walker.chain(6) is not None for _ in range(200))
    chains = [longest_walker.chain(6) for _ in range(200)]
    full = [chain for chain in chains if chain is not None and len(chain.hops) == 6]
    assert len(full) > random_full  # backtracking rescues walks a single random walk loses
    for chain in full:
        assert len(set(chain.entities)) == 7
        assert len({hop.relation for hop in chain.hops}) == 6
        assert all(kg.has_edge(hop.head, hop.relation, hop.tail) for hop in chain.hops)
        assert all(kg.degree(entity) <= 400 for entity in chain.entities[1:])
    assert not longest_walker._visited.any()


def test_intersect_of_node_arrays_is_numpys_intersection_at_every_size():
    """`intersect` looks a few nodes up one by one and hands larger arrays to numpy: the same nodes,
    sorted, in the same dtype either way (empty, one node, a few, many, either side smaller)."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        first, second = (np.unique(rng.integers(0, 400, rng.integers(0, high))).astype(np.int32) for high in (150, 300))
        for a, b in ((first, second), (second, first)):
            found, expected = intersect(a, b), np.intersect1d(a, b, assume_unique=True)
            assert found.dtype == expected.dtype and np.array_equal(found, expected)


def test_steps_a_graph_keeps_cannot_be_changed_by_a_caller():
    relations = {"r": Relation(id="r", forward="r", inverse="is r of")}
    graph = KnowledgeGraph.from_triples(
        [Triple(head=f"/a/{n}", relation="r", tail=f"/b/{n % 3}") for n in range(6)], {}, relations, "kept"
    )
    frontier = np.array([graph.node_index["/a/0"], graph.node_index["/a/1"]], dtype=np.int32)
    reached = graph.step_nodes(frontier, "r", "forward")
    assert graph.ids(reached) == {"/b/0", "/b/1"} and graph.step_nodes(frontier.copy(), "r", "forward") is reached
    with pytest.raises(ValueError):
        reached[0] = 0

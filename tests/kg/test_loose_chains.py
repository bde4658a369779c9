"""A chain whose set, in the world, holds a large share of its kind narrows nothing there: the hops
before it are not counted in the effective hops, and where the whole chain is that loose the
answer's cues decide (synth.kg.shortcuts.loose_point; docs/audit.md, round 28)."""

from named_graph import named_graph

from synth.kg.graph import KnowledgeGraph
from synth.kg.multiplicity import WorldConfig, WorldModel
from synth.kg.shortcuts import effective_hops, loose_point
from synth.schemas import Constraint, Step, Triple

FILMS = 20


def _graph(films_shot_in_the_city: int) -> KnowledgeGraph:
    """Ten people born in ten cities; the first city hosts the shoots of `films_shot_in_the_city` of
    20 films (a second city the rest); each film has its own composer, and each composer died in a
    city of their own; one more film, Seabiscuit, was shot in the first composer's death city and
    in two more (so it alone leaves three candidates, no shortcut)."""
    triples = [Triple(head=f"/person/{n}", relation="born_in", tail=f"/birthplace/{n}") for n in range(10)]
    for film in range(FILMS):
        shot = "/birthplace/0" if film < films_shot_in_the_city else "/birthplace/1"
        triples += [
            Triple(head=f"/film/{film}", relation="shot_in", tail=shot),
            Triple(head=f"/film/{film}", relation="music", tail=f"/composer/{film}"),
            Triple(head=f"/composer/{film}", relation="died_in", tail=f"/deathplace/{film}"),
        ]
    triples += [
        Triple(head="/film/seabiscuit", relation="shot_in", tail="/deathplace/0"),
        Triple(head="/film/seabiscuit", relation="shot_in", tail="/elsewhere/0"),
        Triple(head="/film/seabiscuit", relation="shot_in", tail="/elsewhere/1"),
    ]
    return named_graph(triples, "loose")


CHAIN = Constraint(
    anchor="/person/0",
    steps=[
        Step(relation="born_in"),  # one city
        Step(relation="shot_in", direction="inverse"),  # the films shot there
        Step(relation="music"),  # their composers
        Step(relation="died_in"),  # where those died
    ],
)
CUE = Constraint(anchor="/film/seabiscuit", steps=[Step(relation="shot_in")])


def _world(graph: KnowledgeGraph) -> WorldModel:
    return WorldModel(graph, WorldConfig(scale=10, audit_flags=False))


def test_a_chain_loose_in_the_middle_counts_only_the_hops_after_it():
    """Half of all films were shot in the city: the films, their composers (half of all composers)
    are any films' and composers'; a solver needs only the last hop."""
    graph = _graph(films_shot_in_the_city=10)
    world = _world(graph)
    assert loose_point(world, CHAIN, last=False) == (3, 0.5)
    shortcut = effective_hops(graph, world, [CHAIN])
    assert shortcut.hops == 1 and not shortcut.cues_only
    assert shortcut.label.startswith("the chain's first 3 hops reach 50%")


def test_a_chain_loose_to_its_end_leaves_the_answer_to_its_cues():
    """The death cities of half of all composers, intersected with Seabiscuit's filming locations:
    the cue decides, a long chain's hops are decoration."""
    graph = _graph(films_shot_in_the_city=10)
    world = _world(graph)
    assert loose_point(world, CHAIN, last=True) == (4, 0.5)
    shortcut = effective_hops(graph, world, [CHAIN, CUE])
    assert shortcut.hops == 1 and shortcut.cues_only
    assert "the cues decide" in shortcut.label


def test_a_tight_chain_keeps_its_hops():
    """One film was shot in the city: every set stays a small share of its kind."""
    graph = _graph(films_shot_in_the_city=1)
    world = _world(graph)
    assert loose_point(world, CHAIN, last=True) is None
    assert effective_hops(graph, world, [CHAIN, CUE]).hops == 4
    assert effective_hops(graph, world, [CHAIN]).hops == 4


def test_the_share_is_a_setting():
    """`loose_share` above the chain's largest share: nothing is loose."""
    graph = _graph(films_shot_in_the_city=10)
    world = WorldModel(graph, WorldConfig(scale=10, audit_flags=False, loose_share=0.6))
    assert loose_point(world, CHAIN, last=True) is None
    assert effective_hops(graph, world, [CHAIN, CUE]).hops == 4

"""Walks, reverse construction and templates on a ten-entity graph whose answers are known by hand."""

import random
from collections import Counter
from pathlib import Path

import pytest

from synth.generators.kg_walk import RandomWalker, Walk, WalkConfig
from synth.generators.multihop import GIVE_UP_AFTER, MultihopGenerator
from synth.generators.reverse import ConstructConfig, ReverseConstructor
from synth.generators.templates import TemplateVerbalizer
from synth.kg.graph import KnowledgeGraph
from synth.kg.snapshot import load_snapshot
from synth.schemas import Constraint, Entity, Fact, Hop, Relation, Step, Triple

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_kg"


@pytest.fixture(scope="module")
def kg():
    return load_snapshot(TINY)


def springfield_walk(film="/f/one", person="/p/alice"):
    return Walk(
        entities=("/c/springfield", person, film),
        hops=(
            Hop(head=person, relation="born_in", tail="/c/springfield", direction="inverse"),
            Hop(head=person, relation="directed", tail=film),
        ),
    )


def test_follow_expands_sets_over_both_directions(kg):
    walk = springfield_walk()
    from synth.generators.reverse import chain_constraint

    constraint = chain_constraint(walk)
    assert kg.follow(constraint.anchor, constraint.steps) == {"/f/one", "/f/two"}


CHAIN_ONLY = ConstructConfig(describe_intermediates=0, min_cue_candidates=1, minimal_cues=False)
"""The mechanism alone: a cue only the answer has is allowed and unneeded cues are kept (the defaults
refuse the one and drop the other)."""


def test_follow_keeps_only_entities_with_the_steps_facts(kg):
    oscar = Fact(anchor="/a/oscar", relation="won", direction="inverse")
    steps = [Step(relation="born_in", direction="inverse", where=[oscar]), Step(relation="directed")]
    assert kg.follow("/c/springfield", steps) == {"/f/one"}
    assert kg.follow("/c/shelbyville", steps) == {"/f/three"}
    assert (
        kg.follow(
            "/c/springfield", [steps[0].model_copy(update={"where": [oscar.model_copy(update={"anchor": "/nope"})]})]
        )
        == set()
    )


def test_reverse_construction_adds_the_cue_that_singles_out_the_answer(kg):
    construction = ReverseConstructor(kg, CHAIN_ONLY).construct(springfield_walk())
    assert construction.answer == "/f/one"
    assert construction.candidates == (2, 2)  # each cue alone matches two films; together only one
    assert construction.constraints[1].anchor == "/g/drama"
    assert construction.cue_edges == (Hop(head="/f/one", relation="genre", tail="/g/drama", direction="inverse"),)


def test_reverse_construction_gives_up_when_no_cue_separates(kg):
    assert (
        ReverseConstructor(kg, CHAIN_ONLY.model_copy(update={"max_extra_cues": 0})).construct(springfield_walk())
        is None
    )


def test_an_intermediates_own_fact_can_be_the_distinguishing_cue(kg):
    """Without the answer's genre, only Alice's award separates First Light from Second Wind."""
    construction = ReverseConstructor(kg.without_relations(["genre"]), CHAIN_ONLY).construct(springfield_walk())
    assert len(construction.constraints) == 1 and construction.candidates == (1,)
    (described,) = construction.facts
    assert (described.step, described.fact, described.candidates) == (
        0,
        Fact(anchor="/a/oscar", relation="won", direction="inverse"),
        2,
    )
    assert described.edge == Hop(head="/p/alice", relation="won", tail="/a/oscar", direction="inverse")
    assert construction.constraints[0].steps[0].where == [described.fact]


def test_described_intermediate_is_a_branch_of_the_question(kg):
    """describe_intermediates=1 gives Alice an oblique fact (two winners); with it the chain alone is unique."""
    construction = ReverseConstructor(kg, ConstructConfig(describe_intermediates=1)).construct(springfield_walk())
    assert [described.fact.anchor for described in construction.facts] == ["/a/oscar"]
    assert construction.constraints[0].named == ["/c/springfield", "/a/oscar"] and len(construction.constraints) == 1
    question = TemplateVerbalizer(kg).question(construction.constraints)
    # the opening varies per item (Which/What/Name the); the body is the description with its branch
    assert question.endswith("film was directed by the person who won Academy Award and was born in Springfield?")


def test_template_question_hides_intermediates_and_joins_cues(kg):
    construction = ReverseConstructor(kg, CHAIN_ONLY).construct(springfield_walk())
    question = TemplateVerbalizer(kg).question(construction.constraints)
    assert question.endswith(
        " directed by a person born in Springfield and belongs to the genre Drama?"
    ) or question.endswith(" directed by a person born in Springfield and belongs to the genre Drama."), question
    oscar = Fact(anchor="/a/oscar", relation="won", direction="inverse")
    branched = construction.constraints[0].model_copy(
        update={
            "steps": [
                construction.constraints[0].steps[0].model_copy(update={"where": [oscar]}),
                construction.constraints[0].steps[1],
            ]
        }
    )
    question = TemplateVerbalizer(kg).question([branched, construction.constraints[1]])
    assert (
        "directed by the person who won Academy Award and was born in Springfield, and belongs to the genre Drama"
        in question
    )


def test_walks_respect_hub_cap_distinct_relations_and_no_repeats(kg):
    walker = RandomWalker(kg, WalkConfig(min_seed_degree=1, max_seed_degree=10, max_degree=3), random.Random(0))
    for _ in range(200):
        walk = walker.walk(2)
        if walk is None:
            continue
        assert len(set(walk.entities)) == 3
        assert len({hop.relation for hop in walk.hops}) == 2
        assert all(kg.degree(entity) <= 3 for entity in walk.entities[1:])
        for previous, hop, current in zip(walk.entities, walk.hops, walk.entities[1:]):
            assert (hop.head, hop.tail) == ((previous, current) if hop.direction == "forward" else (current, previous))
            assert kg.has_edge(hop.head, hop.relation, hop.tail)


def test_no_seed_in_the_degree_window_is_a_clear_error(kg):
    with pytest.raises(ValueError, match="widen walk"):
        RandomWalker(kg, WalkConfig(min_seed_degree=30, max_seed_degree=40), random.Random(0))


def test_generator_items_cite_evidence_for_chain_and_cue_edges(kg):
    generator = MultihopGenerator(kg, WalkConfig(min_seed_degree=1), ConstructConfig(), seed=0)
    items = [candidate for candidate in (generator.attempt(2) for _ in range(100)) if not hasattr(candidate, "reason")]
    assert items, "the tiny graph should yield some 2-hop items"
    for item in items:
        assert all(hop.evidence_doc_id in item.evidence_doc_ids for hop in item.path)
        assert len(item.evidence_doc_ids) >= len({hop.head for hop in item.path})
        assert item.provenance.kg_snapshot == "tiny-1" and item.provenance.verbalizer == "template"


def test_an_answer_cap_turns_walks_to_other_answers_before_construction(kg):
    """With `max_answer_share`, no answer is constructed for more than its share of the run's items
    (at least 5): walks no longer end on an answer that reached its cap, so no construction (nor
    the walk itself) is paid for again."""
    capped = ConstructConfig(max_answer_share=0.01)
    generator = MultihopGenerator(kg, WalkConfig(min_seed_degree=1), capped, seed=0, items=100)
    outcomes = [generator.attempt(2) for _ in range(300)]
    answers = Counter(outcome.answer_entity_id for outcome in outcomes if not hasattr(outcome, "reason"))
    assert answers and max(answers.values()) == 5, answers
    capped_answers = [answer for answer, count in answers.items() if count == 5]
    assert all(generator.walker.no_end[kg.node_index[answer]] for answer in capped_answers)
    walked = [generator.walker.chain(2) for _ in range(300)]
    assert not {walk.entities[-1] for walk in walked if walk is not None} & set(capped_answers)
    uncapped = MultihopGenerator(kg, WalkConfig(min_seed_degree=1), ConstructConfig(), seed=0, items=100)
    answers = Counter(
        outcome.answer_entity_id
        for outcome in (uncapped.attempt(2) for _ in range(300))
        if not hasattr(outcome, "reason")
    )
    assert max(answers.values()) > 5, answers


def test_min_cue_candidates_refuses_a_cue_only_the_answer_has(kg):
    """Second Wind is the only comedy: a fine cue for the plain style, a give-away for the obfuscated one."""
    walk = springfield_walk(film="/f/two", person="/p/bob")
    assert ReverseConstructor(kg, CHAIN_ONLY).construct(walk).constraints[1].anchor == "/g/comedy"
    assert ReverseConstructor(kg, CHAIN_ONLY.model_copy(update={"min_cue_candidates": 2})).construct(walk) is None


def test_minimal_cues_drops_a_described_fact_uniqueness_does_not_need(kg):
    """Alice and Bob were both nominated for the Globe: describing Alice by it cuts nothing, the
    genre cue then does all the work, and minimal_cues drops the nomination again."""
    nominated = [Triple(head=person, relation="nominated", tail="/a/globe") for person in ("/p/alice", "/p/bob")]
    graph = KnowledgeGraph.from_triples(
        [Triple(head=h, relation=r, tail=t) for h, r, t in kg.triples() if r != "won"] + nominated,
        {**kg.entities, "/a/globe": Entity(id="/a/globe", name="Golden Globe")},
        {**kg.relations, "nominated": Relation(id="nominated", forward="was nominated for", inverse="had the nominee")},
        "tiny-nominated",
    )
    described = ConstructConfig(describe_intermediates=1, minimal_cues=False)
    kept = ReverseConstructor(graph, described).construct(springfield_walk())
    assert [fact.fact.anchor for fact in kept.facts] == ["/a/globe"] and kept.constraints[1].anchor == "/g/drama"
    minimal = ReverseConstructor(graph, described.model_copy(update={"minimal_cues": True})).construct(
        springfield_walk()
    )
    assert minimal.facts == () and [c.anchor for c in minimal.constraints] == ["/c/springfield", "/g/drama"]
    assert minimal.constraints[0].steps[0].where == [] and minimal.candidates == (2, 2)


def test_a_description_takes_the_relations_noun_when_the_relation_drops_its_own():
    """ "has had the capital" before a description of a place in Africa: "has had a capital located
    in Africa", not a set noun from a sample ("has had a place located in Africa" loses the capital)."""
    names = {
        "/x/africa": "Africa",
        "/x/kenya": "Kenya",
        "/x/nairobi": "Nairobi",
        "/x/ghana": "Ghana",
        "/x/accra": "Accra",
    }
    graph = KnowledgeGraph.from_triples(
        [
            Triple(head="/x/africa", relation="contains", tail=tail)
            for tail in ("/x/kenya", "/x/nairobi", "/x/ghana", "/x/accra")
        ]
        + [
            Triple(head="/x/kenya", relation="capital", tail="/x/nairobi"),
            Triple(head="/x/ghana", relation="capital", tail="/x/accra"),
        ],
        {id: Entity(id=id, name=name) for id, name in names.items()},
        {
            "contains": Relation(
                id="contains", forward="contains", inverse="is located in", head_type="place", tail_type="place"
            ),
            "capital": Relation(
                id="capital",
                forward="has had the capital",
                inverse="has served as the capital of",
                head_type="country",
                tail_type="city",
            ),
        },
        "tiny-capitals",
    )
    constraint = Constraint(
        anchor="/x/africa", steps=[Step(relation="contains"), Step(relation="capital", direction="inverse")]
    )
    assert TemplateVerbalizer(graph).clause(constraint) == "has had a capital located in Africa"


def test_an_answer_whose_walks_never_single_it_out_is_given_up(kg):
    """An answer that `GIVE_UP_AFTER` walks failed to single out (and none did) is no longer walked
    to; one that some walk singled out gets as many tries again per success."""
    generator = MultihopGenerator(kg, WalkConfig(min_seed_degree=1), ConstructConfig(), seed=0)
    walk = next(walk for walk in iter(lambda: generator.walker.chain(2), 0) if walk is not None)
    answer = walk.entities[-1]
    for _ in range(GIVE_UP_AFTER - 1):
        generator._not_singled_out(walk)
    assert not generator.walker.no_end[kg.node_index[answer]]
    generator.singled_out[answer] += 1
    generator._not_singled_out(walk)
    assert not generator.walker.no_end[kg.node_index[answer]], "a success buys another GIVE_UP_AFTER tries"
    for _ in range(GIVE_UP_AFTER):
        generator._not_singled_out(walk)
    assert generator.walker.no_end[kg.node_index[answer]]
    assert generator._given_up_tail(walk)
    assert all(walk is None or walk.entities[-1] != answer for walk in (generator.walker.chain(2) for _ in range(300)))

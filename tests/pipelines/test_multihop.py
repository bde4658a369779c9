"""The multihop recipe on the bundled graph, checked by routines independent of the generator's code."""

import numpy as np
import pytest

from synth.contract.matching import mentions
from synth.generators.kg_walk import WalkConfig
from synth.generators.multihop import MultihopGenerator
from synth.generators.reverse import ConstructConfig
from synth.kg.city_parts import city_part_ids
from synth.kg.multiplicity import WorldConfig, WorldModel
from synth.kg.snapshot import load_snapshot
from synth.kg.types import EntityTypes
from synth.kg.unstated import country_part_ids
from synth.pipelines.multihop import unstated_edges, wrong_edges
from synth.run.generate import generate
from synth.schemas import Hop, Item
from synth.search.corpus import KGCorpus
from synth.settings import Settings
from synth.store.reader import iter_records

SOFT = "/influence/influence_node/influenced_by"
"""Marked `soft` in the bundled graph's override file."""

CONSTRUCTION = ["n=24", "seed=3", "hops=[2,3,4]", "panel.enabled=false"]


@pytest.fixture(scope="module")
def raw_graph(raw_kg):
    """Adjacency straight from the shipped file, without synth's loader."""
    return raw_kg.forward, raw_kg.inverse, raw_kg.names, raw_kg.phrases


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    """Construction and cheap filters only: the panel is tested in test_labeling.py."""
    home = tmp_path_factory.mktemp("multihop_home")
    settings = Settings(home=home)
    result = generate(settings, "multihop", CONSTRUCTION)
    return settings, result.version, list(iter_records(settings, result.version, "items"))


def test_publishes_the_requested_number_balanced_across_hops(published):
    _, version, items = published
    assert len(items) == 24 and version.row_counts["items"] == 24
    assert sorted(item.metadata["chain_hops"] for item in items) == [2] * 8 + [3] * 8 + [4] * 8
    assert all(item.difficulty == "unlabeled" for item in items)
    # effective hops: at most one below the chain (the default tolerance), never above it
    assert all(item.metadata["chain_hops"] - 1 <= item.hops <= item.metadata["chain_hops"] for item in items)


def test_every_answer_is_unique_in_the_graph_under_the_items_constraints(published, kept_kg):
    for item in published[2]:
        answers = set.intersection(*(kept_kg.follow(c.anchor, c.steps) for c in item.constraints))
        assert answers == {item.answer_entity_id}, item.question


def test_items_carry_the_aliases_the_graph_gives_their_answer(published, raw_kg):
    assert all(item.aliases == raw_kg.aliases[item.answer_entity_id] for item in published[2])
    # a few answers have aliases (e.g. "Appalachians" for Appalachian Mountains): 2 of about 100 items here
    kg = load_snapshot()
    generator = MultihopGenerator(kg, WalkConfig(), ConstructConfig(), seed=1)
    items = [item for item in (generator.attempt(2) for _ in range(800)) if isinstance(item, Item)]
    with_aliases = [item for item in items if raw_kg.aliases[item.answer_entity_id]]
    assert len(with_aliases) >= 2 and all(item.aliases == raw_kg.aliases[item.answer_entity_id] for item in items)


def test_hop_count_matches_a_connected_construction_path(published, raw_graph):
    forward = raw_graph[0]
    for item in published[2]:
        assert item.metadata["chain_hops"] == len(item.path) and item.hops <= len(item.path)
        walked = [item.constraints[0].anchor]
        for hop in item.path:
            assert hop.tail in forward[(hop.head, hop.relation)]
            walked.append(hop.tail if hop.direction == "forward" else hop.head)
            assert (hop.head if hop.direction == "forward" else hop.tail) == walked[-2]
        assert walked[-1] == item.answer_entity_id


def test_questions_name_neither_the_answer_nor_any_intermediate(published, raw_graph):
    names = raw_graph[2]
    for item in published[2]:
        assert not mentions(item.question, item.answer), item.question
        anchors = {names[entity] for c in item.constraints for entity in c.named}
        for hop in item.path[:-1]:
            intermediate = hop.tail if hop.direction == "forward" else hop.head
            if not any(mentions(anchor, names[intermediate]) for anchor in anchors):
                assert not mentions(item.question, names[intermediate]), item.question


def test_every_hop_has_an_evidence_document_that_states_it(published, raw_graph):
    _, _, names, phrases = raw_graph
    corpus = KGCorpus(load_snapshot())
    for item in published[2]:
        for hop in item.path:
            document = corpus.document(hop.evidence_doc_id)
            assert document is not None and hop.evidence_doc_id in item.evidence_doc_ids
            assert f"{names[hop.head]} {phrases[hop.relation]} {names[hop.tail]}." in document.text
        for edge in item.metadata["cue_edges"]:  # cues about the answer and facts about intermediates
            document = corpus.document(edge["evidence_doc_id"])
            assert f"{names[edge['head']]} {phrases[edge['relation']]} {names[edge['tail']]}." in document.text


def test_funnel_and_lineage_are_recorded(published):
    settings, version, items = published
    stages = [stage.stage for stage in version.funnel]
    assert stages[:2] == ["walk", "uniqueness"]
    assert {"format", "leakage", "dedup", "near_dup", "shortcut"} <= set(stages) and "contamination" not in stages
    assert version.funnel[-1].kept == len(items)
    assert version.kg_snapshot.startswith("fb15k237-") and version.seed == 3
    assert version.config["hops"] == [2, 3, 4]
    assert version.summary["distinct_relations"] > 10 and version.summary["top_relation_share"] < 0.3


def test_same_seed_reproduces_and_another_seed_differs(published, tmp_path):
    _, _, items = published
    again = generate(Settings(home=tmp_path / "a"), "multihop", CONSTRUCTION)
    other = generate(Settings(home=tmp_path / "b"), "multihop", [*CONSTRUCTION[:1], "seed=4", *CONSTRUCTION[2:]])
    same = list(iter_records(Settings(home=tmp_path / "a"), again.version, "items"))
    different = list(iter_records(Settings(home=tmp_path / "b"), other.version, "items"))
    assert same == items
    assert {item.id for item in different} != {item.id for item in items}


def _without(constraints, index, step=None, fact=None):
    """The constraints with one answer cue (index > 0) or one fact of the chain (step, fact) left out."""
    if step is None:
        return [c for position, c in enumerate(constraints) if position != index]
    chain = constraints[0]
    steps = [
        s.model_copy(update={"where": [f for k, f in enumerate(s.where) if (position, k) != (step, fact)]})
        for position, s in enumerate(chain.steps)
    ]
    return [chain.model_copy(update={"steps": steps}), *constraints[1:]]


def test_obfuscated_style_needs_every_cue_and_no_cue_names_the_answer(raw_kg, tmp_path):
    """style=obfuscated, re-derived from the raw triples: the anchor is hidden behind a fact shared
    by several entities, every fact and answer cue holds for at least two entities alone, the cues
    together single out the answer, leaving any one out does not, and there are at least two named cues."""
    settings = Settings(home=tmp_path)
    result = generate(settings, "multihop", ["n=12", "seed=3", "hops=[2,3]", "style=obfuscated", "panel.enabled=false"])
    items = list(iter_records(settings, result.version, "items"))
    assert len(items) == 12 and {item.metadata["style"] for item in items} == {"obfuscated"}

    def answers(constraints):
        return set.intersection(*(raw_kg.follow(c.anchor, c.steps) for c in constraints))

    world = WorldModel(load_snapshot())

    def needed(rest) -> bool:
        """Without the part, the question has other answers: in the graph, or in the larger world."""
        return len(answers(rest)) > 1 or world.answers(rest) > world.config.max_answers

    for item in items:
        chain, cues = item.constraints[0], item.constraints[1:]
        first = chain.steps[0].model_copy(update={"where": []})
        assert len(raw_kg.follow(chain.anchor, [first])) >= 2, item.question  # the hidden anchor's fact names nobody
        assert answers(item.constraints) == {item.answer_entity_id}
        facts = [(position, k) for position, step in enumerate(chain.steps) for k in range(len(step.where))]
        assert len(facts) + len(cues) >= 1, item.question  # two named cues at least
        for position, k in facts:
            fact = chain.steps[position].where[k]
            holders = (raw_kg.forward if fact.direction == "forward" else raw_kg.inverse)[(fact.anchor, fact.relation)]
            assert len(holders) >= 2 and raw_kg.names[fact.anchor] in item.question
            assert needed(_without(item.constraints, 0, position, k)), f"fact not needed: {item.question}"
        for index, cue in enumerate(cues, start=1):
            assert len(raw_kg.follow(cue.anchor, cue.steps)) >= 2, f"one cue names the answer: {item.question}"
            assert needed(_without(item.constraints, index)), f"cue not needed: {item.question}"
    rejected = {stage.stage: stage.dropped for stage in result.version.funnel}["uniqueness"]
    assert set(rejected) <= {"not_unique", "single_cue", "world_ambiguous", "shortcut_cue", "known_rivals"}


def test_a_second_run_drops_near_duplicates_of_the_first_version(published, raw_graph):
    settings, first, items = published
    # a larger n is another run (the same command would return the first version) over the same walks
    second = generate(settings, "multihop", [*CONSTRUCTION, "n=30"])
    near = {stage.stage: stage for stage in second.version.funnel}["near_dup"]
    assert near.dropped.get("near_duplicate_of_earlier_version", 0) >= 1
    again = list(iter_records(settings, second.version, "items"))
    assert not {item.question for item in again} & {item.question for item in items}


@pytest.mark.parametrize(
    "style, hops, seed",
    [("plain", "[2,3,4]", 5), ("obfuscated", "[2,3,4]", 5), ("plain", "[5,6]", 6)],
    ids=["plain", "obf", "long"],
)
@pytest.mark.slow  # re-derives the whole graph from its raw triples
def test_world_bounded_steps_are_small_and_no_cue_is_a_hub_rederived_from_the_raw_triples(
    kept_kg, tmp_path, style, hops, seed
):
    """For a sample of each style, over the shipped triples less the facts the run takes as false:
    every step the construction recorded as world-bounded has few values per entity (and every other
    step has not), and no named fact of the question is shared by a hub's share of its relation; over
    all the shipped triples, the answer is unique; and no item states a fact it may only count."""
    world = WorldConfig()
    kg = load_snapshot()
    kept = kept_kg
    cleaned = kg.without_edges(wrong_edges(kg, world))
    heads, relations, tails = cleaned.edges()
    unstated = {
        (cleaned.node_ids[heads[edge]], cleaned.relation_ids[relations[edge]], cleaned.node_ids[tails[edge]])
        for edge in np.flatnonzero(unstated_edges(cleaned, world))
    }
    parts = country_part_ids(kg, EntityTypes(kg)) | city_part_ids(kg, EntityTypes(kg))
    settings = Settings(home=tmp_path)
    budget = ["max_attempts_per_item=6000"] if hops == "[5,6]" else []  # honest long chains are rare
    result = generate(
        settings, "multihop", ["n=12", f"seed={seed}", f"hops={hops}", f"style={style}", "panel.enabled=false", *budget]
    )
    items = list(iter_records(settings, result.version, "items"))
    # a 5-6 hop chain that stays unique in the world is rare in this graph: the budget publishes 5 of
    # the 12 asked (docs/audit.md, round 13: long chains yield half what they did before a team's place
    # became many-valued; round 28: nor is a chain loose in the middle counted as long)
    assert len(items) == 12 if hops != "[5,6]" else len(items) >= 3
    for item in items:
        recorded = item.metadata["world"]
        assert recorded["answers"] <= world.max_answers, item.question
        for constraint, bounded in zip(item.constraints, recorded["bounded_steps"], strict=True):
            for step, marked in zip(constraint.steps, bounded, strict=True):
                small = kept.world_bounded(step.relation, step.direction, world.bounded_mean, world.bounded_p90)
                assert marked == small, f"{step.relation} ({step.direction}) in: {item.question}"
            first = constraint.steps[0]
            facts = [(constraint.anchor, first.relation, first.direction)] + [
                (fact.anchor, fact.relation, fact.direction) for step in constraint.steps for fact in step.where
            ]
            for fact in facts:
                assert not kept.hub(*fact, world.hub_share, world.hub_min), f"hub cue {fact} in: {item.question}"
        answers = set.intersection(*(kept.follow(c.anchor, c.steps) for c in item.constraints))
        assert answers == {item.answer_entity_id}, item.question
        assert item.answer_entity_id not in parts, item.question  # England, Hammersmith: the UK, London fit too
        stated = [*item.path, *(Hop.model_validate(edge) for edge in item.metadata["cue_edges"])]
        assert not {(edge.head, edge.relation, edge.tail) for edge in stated} & unstated, item.question
        # a relation no reader can rule anyone out of is never the step into the answer nor a cue on it
        into_answer = [constraint.steps[-1].relation for constraint in item.constraints]
        assert SOFT not in into_answer, item.question

"""Consensus rules and difficulty label boundaries, from hand-made attempts."""

import pytest

from synth.filters.base import FilterChain
from synth.filters.consensus import ConsensusConfig, ConsensusFilter, Thresholds, label, pass_rates, reachable_labels
from synth.schemas import SolverAttempt

SOLVERS = {"a": "model-a", "b": "model-b", "c": "model-c"}


def attempts(item_id="item-0", **outcomes):
    """outcomes: solver_condition="1100" (one character per sample: 1 correct, 0 wrong)."""
    made = []
    for key, samples in outcomes.items():
        solver, condition = key.split("_", 1)
        for index, mark in enumerate(samples):
            made.append(
                SolverAttempt(
                    id=f"{item_id}-{key}-{index}",
                    item_id=item_id,
                    solver=solver,
                    model=SOLVERS[solver],
                    condition=condition,
                    sample_index=index,
                    answer="Film 0" if mark == "1" else "Wrong Film",
                    correct=mark == "1",
                    num_tool_calls=index + 1 if condition == "search" else 0,
                )
            )
    return made


@pytest.mark.parametrize(
    "search, expected",
    [
        ("1111", "easy"),
        ("1110", "easy"),  # 0.75 is easy
        ("1100", "medium"),
        ("1000", "medium"),  # 0.25 is medium
        ("10000", "hard"),  # 0.2: solved, below medium
        ("0000", "unsolved"),
    ],
)
def test_search_pass_rate_boundaries(search, expected):
    made = attempts(a_search=search[:2], b_search=search[2:], a_closed_book="00", b_closed_book="00")
    assert label(made, Thresholds()) == expected


def test_trivial_needs_a_majority_of_closed_book_solvers():
    two_of_three = attempts(a_closed_book="10", b_closed_book="11", c_closed_book="00", a_search="00")
    one_of_three = attempts(a_closed_book="10", b_closed_book="00", c_closed_book="00", a_search="00")
    one_of_two = attempts(a_closed_book="11", b_closed_book="00", a_search="11")
    assert label(two_of_three, Thresholds()) == "trivial"  # 0.5 closed-book counts as knowing
    assert label(one_of_three, Thresholds()) == "unsolved"
    assert label(one_of_two, Thresholds()) == "easy"  # half is not a majority


def run_consensus(make_item, made, supports=None, **config):
    judge = ConsensusFilter(ConsensusConfig(**config), made, SOLVERS, supports)
    chain = FilterChain([judge])
    chain.run([make_item(0)])
    return chain.verdicts[0], judge.labels


def test_unanswerable_from_gold_evidence_is_dropped_with_its_reason(make_item):
    verdict, labels = run_consensus(
        make_item, attempts(a_gold_evidence="00", b_gold_evidence="00", a_search="11"), min_gold_solve_rate=0.0
    )
    assert (verdict.kept, verdict.reason, verdict.details) == (
        False,
        "unanswerable_with_gold_evidence",
        {"gold_attempts": 4},
    )
    assert labels == {}
    verdict, _ = run_consensus(make_item, attempts(a_gold_evidence="01", a_search="11"))
    assert verdict.kept
    verdict, _ = run_consensus(make_item, attempts(a_gold_evidence="00", a_search="11"), drop_unanswerable=False)
    assert verdict.kept


def test_ambiguous_when_solvers_agree_on_another_answer_the_graph_supports(make_item):
    made = attempts(a_search="00", b_search="01", a_gold_evidence="1")
    verdict, _ = run_consensus(make_item, made, supports=lambda item, answer: answer == "Wrong Film")
    assert (verdict.kept, verdict.reason, verdict.details) == (False, "ambiguous", {"other_answer": "Wrong Film"})
    verdict, _ = run_consensus(make_item, made, supports=lambda item, answer: False)  # the graph says no: just wrong
    assert verdict.kept
    verdict, _ = run_consensus(
        make_item, made, supports=lambda item, answer: True, ambiguous_min_votes=4
    )  # too few votes
    assert verdict.kept


def test_trivial_items_are_dropped_or_kept_labeled_as_configured(make_item):
    made = attempts(a_closed_book="11", b_closed_book="11", a_search="11", a_gold_evidence="1")
    verdict, _ = run_consensus(make_item, made)
    assert (verdict.kept, verdict.reason) == (False, "trivial_closed_book")
    verdict, labels = run_consensus(make_item, made, drop_trivial=False)
    assert verdict.kept and labels["item-0"].label == "trivial"


def test_labels_carry_pass_rates_tool_calls_and_the_versions_used(make_item):
    made = attempts(a_search="011", b_search="0", a_closed_book="0", a_gold_evidence="1")
    verdict, labels = run_consensus(make_item, made, thresholds=Thresholds(name="strict", easy=0.9, medium=0.5))
    stored = labels["item-0"]
    assert verdict.kept and stored.label == "medium" and stored.thresholds == "strict"
    assert stored.solvers == SOLVERS and stored.metadata["thresholds"]["easy"] == 0.9
    assert (stored.mean_tool_calls, stored.min_tool_calls) == (2.5, 2)  # correct search samples used 2 and 3 calls
    assert {(rate.solver, rate.condition): (rate.correct, rate.attempts) for rate in stored.pass_rates} == {
        ("a", "search"): (2, 3),
        ("b", "search"): (0, 1),
        ("a", "closed_book"): (0, 1),
        ("a", "gold_evidence"): (1, 1),
    }
    assert pass_rates(made) == stored.pass_rates


def test_an_item_the_panel_never_saw_is_dropped_not_labeled(make_item):
    verdict, labels = run_consensus(make_item, [])
    assert (verdict.kept, verdict.reason) == (False, "no_panel_attempts") and labels == {}


def test_a_panel_that_cannot_read_gold_evidence_does_not_judge_answerability(make_item):
    made = attempts("item-0", a_gold_evidence="00", a_search="00") + attempts(
        "item-1", a_gold_evidence="00", a_search="00"
    )
    judge = ConsensusFilter(ConsensusConfig(min_gold_solve_rate=0.2), made, SOLVERS)
    chain = FilterChain([judge])
    kept = chain.run([make_item(0), make_item(1)])
    assert len(kept) == 2 and "0/2 items" in judge.skipped["unanswerable_with_gold_evidence"]
    assert {label.label for label in judge.labels.values()} == {"unsolved"}
    able = attempts("item-0", a_gold_evidence="01") + attempts(
        "item-1", a_gold_evidence="00"
    )  # 1/2 >= 0.2: the rule holds
    chain = FilterChain([ConsensusFilter(ConsensusConfig(min_gold_solve_rate=0.2), able, SOLVERS)])
    assert [item.id for item in chain.run([make_item(0), make_item(1)])] == ["item-0"]


def test_every_label_occurs_with_the_default_panel_of_two_solvers(make_item):
    """Two model solvers at the default k=4 pool 8 search attempts per item: a mix of pass rates gives
    every label, `hard` (one success in eight) included."""
    from synth.solving.panel import SolverSpec

    k = SolverSpec(name="a", model="m").k
    mixes = {"easy": 7, "medium": 3, "hard": 1, "unsolved": 0}
    made = []
    for index, correct in enumerate(mixes.values()):
        marks = "1" * correct + "0" * (2 * k - correct)
        made += attempts(f"item-{index}", a_search=marks[:k], b_search=marks[k:], a_closed_book="0000")
    judge = ConsensusFilter(ConsensusConfig(), made, SOLVERS)
    FilterChain([judge]).run([make_item(index, id=f"item-{index}") for index in range(len(mixes))])
    assert [judge.labels[f"item-{index}"].label for index in range(len(mixes))] == list(mixes)
    assert judge.label_reach()["labels_possible"] == ["easy", "medium", "hard", "unsolved"]
    assert "labels_impossible" not in judge.label_reach()


def test_the_labels_a_panel_cannot_give_are_named_with_what_would_allow_them(make_item):
    """Four pooled attempts give rates 0, 1/4, ... 1: none in (0, 0.25), so `hard` cannot occur."""
    assert reachable_labels(4, Thresholds()) == ["easy", "medium", "unsolved"]
    assert reachable_labels(5, Thresholds()) == ["easy", "medium", "hard", "unsolved"]
    assert reachable_labels(1, Thresholds()) == ["easy", "unsolved"]
    made = attempts("item-0", a_search="10", b_search="00")
    judge = ConsensusFilter(ConsensusConfig(), made, SOLVERS)
    assert judge.label_reach()["labels_impossible"] == (
        "hard cannot occur with 4 pooled search attempts per item; 5 or more make it possible (raise the solvers' k)"
    )

"""Realized difficulty from hand-made attempts: the figures of synth.filters.realized, stored on the
label, and the optional rule that labels an item whose answer turned up early one level easier."""

from test_consensus import SOLVERS, attempts

from synth.filters.base import FilterChain
from synth.filters.consensus import ConsensusConfig, ConsensusFilter, Thresholds
from synth.filters.realized import realized_difficulty, with_early_hit
from synth.schemas import Usage


def seen_at(made, steps):
    """The search attempts with the answer first seen at `steps` (in order), 100 tokens each."""
    searches = iter(steps)
    return [
        attempt.model_copy(
            update={
                "answer_seen_at": next(searches),
                "usage": Usage(prompt_tokens=80, completion_tokens=20),
                "trajectory_id": attempt.id,  # a model's attempt (a baseline's has no trajectory)
            }
        )
        if attempt.condition == "search"
        else attempt
        for attempt in made
    ]


def test_the_figures_come_from_the_correct_searches_and_the_closed_book_attempts():
    made = seen_at(attempts(a_search="110", a_closed_book="10", b_closed_book="00"), [2, 3, None])
    figures = realized_difficulty(made)
    assert figures["answer_hit_step"] == 2.5  # median over the two correct searches
    assert figures["calls_to_correct"] == 1.5  # `attempts` gives sample i i+1 calls: 1 and 2
    assert figures["tokens_to_correct"] == 100
    assert figures["closed_book_rate"] == 0.25
    nothing = realized_difficulty(attempts(a_search="00"))
    assert nothing == {
        "answer_hit_step": None,
        "calls_to_correct": None,
        "tokens_to_correct": None,
        "closed_book_rate": None,
    }


def test_the_label_holds_them_and_an_early_hit_makes_it_easier_only_when_asked(make_item):
    made = seen_at(attempts(a_search="1100", a_closed_book="00", b_closed_book="00"), [1, 1, None, None])
    item = make_item(0, hops=3, path=[])
    labels = {}
    for early in (None, 1.0):
        thresholds = Thresholds(name="early" if early else "v1", early_hit_step=early)
        judge = ConsensusFilter(ConsensusConfig(thresholds=thresholds, drop_unanswerable=False), made, SOLVERS)
        FilterChain([judge]).run([item])
        labels[early] = judge.labels[item.id]
    assert labels[None].label == "medium" and labels[None].answer_hit_step == 1.0
    assert labels[None].closed_book_rate == 0.0 and labels[None].tokens_to_correct == 100
    assert labels[1.0].label == "easy"  # the answer was in the first result of a 3-hop chain
    assert with_early_hit("medium", {"answer_hit_step": 1.0}, 1, 1.0) == "medium"  # one hop: nothing skipped
    assert with_early_hit("hard", {"answer_hit_step": 2.0}, 3, 1.0) == "hard"  # seen later than asked

"""Consensus over the solver panel: which items are invalid, ambiguous or trivial, and how hard the rest are.

Rules, in order (each can be switched off):
  unanswerable_with_gold_evidence: some solver tried the gold-evidence condition and none solved
      it: the construction is broken or its evidence does not support it. A panel that solves
      fewer than `min_gold_solve_rate` of the batch from gold evidence cannot read well enough to
      judge this, so the rule is then skipped and `skipped` says why. That reader check is measured
      on the batch's first `gold_calibration_items` candidates (all of a smaller batch), so an item's
      label is final once its own attempts and the calibration items' are in, not the whole batch's.
      Items are read back from their own defining statements, which a capable reader nearly always
      manages; the embedded 135M model reads back about a third, and its failures say more about it
      than about the items.
  ambiguous: `ambiguous_min_votes` wrong attempts agree on another answer that the knowledge graph
      also supports (the recipe supplies that check): the item has two right answers.
  trivial: more than half of the solvers that tried closed-book solve it at least half the time:
      the answer is memorized, no search needed.

Difficulty label (threshold set `thresholds.name`, stored with every label so labels of runs with
different thresholds are never mixed up): trivial as above; otherwise by the pass rate of search
attempts pooled over the panel: easy >= `easy`, medium >= `medium`, hard > 0, unsolved = 0.
"""

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Sequence

from pydantic import Field

from synth.config import FrozenConfig
from synth.contract.matching import normalize_answer
from synth.filters.base import CheckResult, Filter
from synth.filters.realized import realized_difficulty, with_early_hit
from synth.llm.types import is_model_failure
from synth.schemas import DifficultyLabel, DifficultyName, Item, PassRate, SolverAttempt
from synth.schemas.solving import Condition


class Thresholds(FrozenConfig):
    name: str = Field(default="v1", pattern=r"^[a-z0-9_]+$", description="Names this threshold set in every label.")
    trivial_closed_book: float = Field(
        default=0.5, ge=0.0, le=1.0, description="Closed-book pass rate at which a solver 'knows' the answer."
    )
    easy: float = Field(
        default=0.75, ge=0.0, le=1.0, description="Pooled search pass rate at or above which an item is easy."
    )
    medium: float = Field(
        default=0.25, ge=0.0, le=1.0, description="... at or above which it is medium (hard below, unsolved at 0)."
    )
    early_hit_step: float | None = Field(
        default=None,
        ge=1,
        description="Realized difficulty in the label (synth.filters.realized): an item of more hops whose correct "
        "search attempts saw the answer by this call (median) is labeled one level easier (hard to medium, medium "
        "to easy): its answer turned up before the chain was walked. Off by default: the label is the pass rate "
        "the RL reward sees, and the realized figures are stored beside it.",
    )


class ConsensusConfig(FrozenConfig):
    drop_unanswerable: bool = Field(default=True, description="Drop items no solver answers from their gold evidence.")
    drop_ambiguous: bool = Field(
        default=True, description="Drop items whose solvers agree on another answer the graph supports."
    )
    drop_trivial: bool = Field(default=True, description="Drop items most solvers answer closed-book.")
    ambiguous_min_votes: int = Field(
        default=2, ge=1, description="Wrong attempts that must agree before the graph is asked."
    )
    min_gold_solve_rate: float = Field(
        default=0.6,
        ge=0.0,
        le=1.0,
        description="Share of the batch the panel must solve from gold evidence before its failures count as "
        "unanswerable (a reader that fails nearly half with the evidence in hand, as the embedded 135M model "
        "does, says little about a question).",
    )
    gold_calibration_items: int = Field(
        default=64,
        ge=1,
        description="The reader check (min_gold_solve_rate) is measured on this many first candidates, so a "
        "streaming run labels an item without waiting for the whole batch.",
    )
    thresholds: Thresholds = Thresholds()


def pass_rates(attempts: Sequence[SolverAttempt]) -> list[PassRate]:
    counts: dict[tuple[str, Condition], list[int]] = defaultdict(lambda: [0, 0])
    for attempt in attempts:
        counts[(attempt.solver, attempt.condition)][0] += 1
        counts[(attempt.solver, attempt.condition)][1] += attempt.correct
    return [
        PassRate(solver=solver, condition=condition, attempts=total, correct=correct)
        for (solver, condition), (total, correct) in sorted(counts.items())
    ]


def search_success(rates: Sequence[PassRate]) -> float | None:
    """Pass rate of search attempts pooled over the panel (None without any): the difficulty signal."""
    search = [rate for rate in rates if rate.condition == "search"]
    total = sum(rate.attempts for rate in search)
    return sum(rate.correct for rate in search) / total if total else None


def search_label(rate: float, thresholds: Thresholds) -> DifficultyName:
    """The label of a pooled search pass rate (trivial aside)."""
    if rate >= thresholds.easy:
        return "easy"
    if rate >= thresholds.medium:
        return "medium"
    return "hard" if rate > 0 else "unsolved"


def reachable_labels(search_attempts: int, thresholds: Thresholds) -> list[str]:
    """The search labels an item with `search_attempts` pooled search attempts can get: with 4,
    rates are 0, 1/4, ... 1, and none falls in (0, medium=0.25), so `hard` cannot occur."""
    rates = [correct / search_attempts for correct in range(search_attempts + 1)] if search_attempts else [0.0]
    found = {search_label(rate, thresholds) for rate in rates}
    return [name for name in ("easy", "medium", "hard", "unsolved") if name in found]


def label(attempts: Sequence[SolverAttempt], thresholds: Thresholds) -> DifficultyName:
    rates = pass_rates(attempts)
    closed = [rate for rate in rates if rate.condition == "closed_book"]
    if closed and sum(rate.rate >= thresholds.trivial_closed_book for rate in closed) * 2 > len(closed):
        return "trivial"
    return search_label(search_success(rates) or 0.0, thresholds)


class ConsensusFilter(Filter):
    """Judges each item from its panel attempts; `labels` collects the difficulty labels of kept items."""

    name = "consensus"

    def __init__(
        self,
        config: ConsensusConfig,
        attempts: Sequence[SolverAttempt],
        solvers: dict[str, str],
        supports: Callable[[Item, str], bool] | None = None,
        judge: str | None = None,
        calibration: Collection[str] | None = None,
    ):
        """`solvers`: name -> model identity; `supports(item, answer)`: does the graph accept `answer`
        too?; `judge`: the answer judge's model identity, recorded on labels; `calibration`: the ids
        of the items the reader check is measured on (None: every item with attempts)."""
        self.config = config
        self.judge = judge
        self.solvers = solvers
        self.supports = supports
        self.attempts: dict[str, list[SolverAttempt]] = defaultdict(list)
        for attempt in attempts:
            self.attempts[attempt.item_id].append(attempt)
        self.labels: dict[str, DifficultyLabel] = {}
        self.skipped: dict[str, str] = {}
        """Rule -> why it was not applied to this batch."""
        answered = {
            item_id: [a for a in item_attempts if not is_model_failure(a.failure)]
            for item_id, item_attempts in self.attempts.items()
        }
        gold = {
            item_id: any(a.correct for a in item_attempts if a.condition == "gold_evidence")
            for item_id, item_attempts in answered.items()
            if any(a.condition == "gold_evidence" for a in item_attempts)
            and (calibration is None or item_id in calibration)
        }
        self.gold_solve_rate = sum(gold.values()) / len(gold) if gold else None
        if config.drop_unanswerable and self.gold_solve_rate is None and self.attempts:
            self.skipped["unanswerable_with_gold_evidence"] = "no solver in the panel ran the gold_evidence condition"
        elif (
            config.drop_unanswerable
            and self.gold_solve_rate is not None
            and self.gold_solve_rate < config.min_gold_solve_rate
        ):
            self.skipped["unanswerable_with_gold_evidence"] = (
                f"the panel solved {sum(gold.values())}/{len(gold)} items from gold evidence (its calibration "
                "items), below "
                f"min_gold_solve_rate={config.min_gold_solve_rate}: too weak a reader to judge answerability"
            )

    def label_reach(self) -> dict[str, object]:
        """Which search labels this batch's panel could give (the most common number of pooled
        search attempts per item decides), and, when one cannot occur, what would let it."""
        counts = Counter(
            sum(attempt.condition == "search" for attempt in attempts) for attempts in self.attempts.values()
        )
        if not counts:
            return {}
        pooled = counts.most_common(1)[0][0]
        possible = reachable_labels(pooled, self.config.thresholds)
        reach: dict[str, object] = {"search_attempts_per_item": pooled, "labels_possible": possible}
        missing = [name for name in ("easy", "medium", "hard") if name not in possible]
        if missing:
            needed = next(
                (
                    n
                    for n in range(pooled + 1, 1025)
                    if set(missing) <= set(reachable_labels(n, self.config.thresholds))
                ),
                None,
            )
            reach["labels_impossible"] = (
                f"{', '.join(missing)} cannot occur with {pooled} pooled search attempts per item"
                + (f"; {needed} or more make it possible (raise the solvers' k)" if needed else "")
            )
        return reach

    def check(self, item: Item) -> CheckResult:
        attempts = self.attempts.get(item.id, [])
        if not attempts:
            return False, "no_panel_attempts"
        # an attempt the model server failed (5xx, timeout, ...) says nothing about the item
        failed = [attempt for attempt in attempts if is_model_failure(attempt.failure)]
        if len(failed) == len(attempts):
            return False, "model_failure", {"failures": dict(Counter(attempt.failure for attempt in failed))}
        attempts = [attempt for attempt in attempts if not is_model_failure(attempt.failure)]
        gold = [attempt for attempt in attempts if attempt.condition == "gold_evidence"]
        applies = self.config.drop_unanswerable and "unanswerable_with_gold_evidence" not in self.skipped
        if applies and gold and not any(attempt.correct for attempt in gold):
            return False, "unanswerable_with_gold_evidence", {"gold_attempts": len(gold)}
        rival = self._rival_answer(item, attempts)
        if self.config.drop_ambiguous and rival is not None:
            return False, "ambiguous", {"other_answer": rival}
        difficulty = label(attempts, self.config.thresholds)
        if self.config.drop_trivial and difficulty == "trivial":
            return False, "trivial_closed_book"
        correct_search = [
            attempt.num_tool_calls for attempt in attempts if attempt.condition == "search" and attempt.correct
        ]
        realized = realized_difficulty(attempts)
        self.labels[item.id] = DifficultyLabel(
            item_id=item.id,
            label=with_early_hit(difficulty, realized, item.hops, self.config.thresholds.early_hit_step),
            pass_rates=pass_rates(attempts),
            mean_tool_calls=realized["calls_to_correct"],
            min_tool_calls=min(correct_search) if correct_search else None,
            answer_hit_step=realized["answer_hit_step"],
            tokens_to_correct=realized["tokens_to_correct"],
            closed_book_rate=realized["closed_book_rate"],
            thresholds=self.config.thresholds.name,
            solvers=self.solvers,
            judge=self.judge,
            metadata={"thresholds": self.config.thresholds.model_dump(mode="json")},
        )
        return True

    def _rival_answer(self, item: Item, attempts: list[SolverAttempt]) -> str | None:
        if self.supports is None:
            return None
        votes = Counter(
            normalize_answer(attempt.answer) for attempt in attempts if attempt.answer and not attempt.correct
        )
        for answer, count in votes.most_common():
            if count < self.config.ambiguous_min_votes:
                break
            original = next(
                attempt.answer for attempt in attempts if attempt.answer and normalize_answer(attempt.answer) == answer
            )
            if self.supports(item, original):
                return original
        return None

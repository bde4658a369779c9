"""`synth eval` runs side by side: their figures in one table (as `synth evals compare` prints
them) and their attempts item by item, the items the runs disagree on first, because those are
the ones a reader opens. Each run's attempts are grouped per item by DuckDB from its own Parquet
file; an attempt's transcript is read only when its page is opened."""

from dataclasses import dataclass, field
from typing import Any

from synth.browse.data import query_files
from synth.schemas import EvalAttempt, EvalRun
from synth.settings import Settings
from synth.store.arrow_schema import from_row
from synth.store.evals import evals_dir

SHOWN = 200
"""Items the side-by-side table shows."""


@dataclass
class ItemRow:
    item_id: str
    question: str
    gold: str
    results: list[dict[str, Any] | None] = field(default_factory=list)
    """Per run (in the runs' order): right (correct samples), samples, predicted (sample 0); None
    when that run did not attempt the item."""

    @property
    def disagree(self) -> bool:
        """Whether the runs that attempted the item did not all get it equally right."""
        shares = {result["right"] / result["samples"] for result in self.results if result}
        return len(shares) > 1


@dataclass
class SideBySide:
    runs: list[EvalRun]
    rows: list[ItemRow]
    """The first SHOWN items: those the runs disagree on, then the rest, each by item id."""
    items: int
    """Items any of the runs attempted."""
    disagreeing: int


def side_by_side(settings: Settings, runs: list[EvalRun], shown: int = SHOWN) -> SideBySide:
    merged: dict[str, ItemRow] = {}
    for index, run in enumerate(runs):
        per_item = query_files(
            settings,
            "select item_id, any_value(question) as question, any_value(gold) as gold, "
            "count(*) filter (where correct) as right, count(*) as samples, "
            "arg_min(predicted, sample) as predicted from {attempts} group by item_id",
            [],
            attempts=evals_dir(settings) / run.id / "attempts.parquet",
        )
        for result in per_item:
            row = merged.setdefault(
                result["item_id"],
                ItemRow(result["item_id"], result["question"], result["gold"], [None] * len(runs)),
            )
            row.results[index] = {key: result[key] for key in ("right", "samples", "predicted")}
    ordered = sorted(merged.values(), key=lambda row: (not row.disagree, row.item_id))
    return SideBySide(runs, ordered[:shown], len(merged), sum(row.disagree for row in merged.values()))


def eval_attempt(settings: Settings, run: EvalRun, item_id: str, sample: int) -> EvalAttempt | None:
    """One attempt of the run, transcript and all; None when the run has no such attempt."""
    rows = query_files(
        settings,
        "select * from {attempts} where item_id = ? and sample = ?",
        [item_id, sample],
        attempts=evals_dir(settings) / run.id / "attempts.parquet",
    )
    return from_row(EvalAttempt, rows[0]) if rows else None

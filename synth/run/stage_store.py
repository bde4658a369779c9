"""The saved stages of one run, as every scheduler sees them: which are done, saving a finished one,
loading one back as its record.

Saving is the one place a run's budget and failure gate are enforced: a stage whose calls went
past the budget, or failed above `failures.max_rate`, is not saved, so the run stops and a rerun
resumes from the stages that were (`synth.store.workdir` keeps them; the response cache keeps
the answered calls of the one that was cut off)."""

import os
import socket
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from synth.errors import BudgetExhausted
from synth.llm.accounting import Ledger
from synth.llm.gate import check_stage
from synth.pipelines.records import StageRecord
from synth.progress import Progress
from synth.run.limits import RunLimits
from synth.store.workdir import RunDir

S = TypeVar("S", bound=StageRecord)


class StageStore:
    """Stages of `run_dir`, saved under `limits` with the calls `ledger` counts."""

    def __init__(self, run_dir: RunDir, ledger: Ledger, limits: RunLimits, progress: Callable[[], Progress]):
        """`progress`: where "done earlier, skipped" is said (a streaming run mutes its logs for a while)."""
        self.dir, self.ledger, self.limits, self._progress = run_dir, ledger, limits, progress

    def done(self, name: str) -> bool:
        return self.dir.done(name)

    def load(self, kind: type[S], name: str) -> S:
        return kind.from_output(self.dir.load(name))

    def make(self, name: str, work: Callable[[], StageRecord]) -> None:
        """Run `work` and save what it returns as stage `name`, unless an earlier attempt saved it."""
        if self._skipped(name):
            return
        started = time.monotonic()
        with self.ledger.stage() as calls:
            record = work()
        self.save(name, record, calls, started)

    async def make_async(self, name: str, work: Callable[[], Awaitable[StageRecord]]) -> None:
        """`make` for a coroutine stage; its calls are told apart from those of the stages running
        beside it in the same event loop."""
        if self._skipped(name):
            return
        started = time.monotonic()
        with self.ledger.stage() as calls:
            record = await work()
        self.save(name, record, calls, started)

    def _skipped(self, name: str) -> bool:
        if self.dir.done(name):
            self._progress().log(f"{name}: done earlier, skipped")
            return True
        return False

    def save(self, name: str, record: StageRecord, calls: Ledger, started: float, own_budget: bool = False) -> None:
        """Save a finished stage, unless the budget or the failure gate stops the run. `calls`: the
        stage's own calls; `started`: its `time.monotonic()` start. `own_budget`: only a call of this
        stage refused by the budget stops it (a stage that finished while others spent the budget,
        e.g. a streaming run's construction, is kept)."""
        rows = calls.export()
        refused = any(row["failures"].get("budget_exceeded") for row in rows)
        if refused if own_budget else self.ledger.exhausted:
            raise BudgetExhausted(self.budget_message(name))
        check_stage(name, rows, self.ledger, self.limits.failures)
        output = record.to_output()
        busy, now = time.monotonic() - started, time.time()  # one clock reading: the interval is `busy` long
        output.meta.update(
            seconds=round(busy, 2),
            interval=[round(now - busy, 3), round(now, 3)],  # wall clock, for the run's wall time
            llm=rows,
            prices={model: price.model_dump() for model, price in self.ledger.prices.items()},
            worker=f"{os.getpid()}@{socket.gethostname()}",
        )
        self.dir.save(name, output)

    def budget_message(self, stage: str) -> str:
        budget, ledger = self.limits.budget, self.ledger
        limits = [f"max_tokens={budget.max_tokens}"] if budget.max_tokens is not None else []
        limits += [f"max_cost_usd={budget.max_cost_usd:g}"] if budget.max_cost_usd is not None else []
        limit = " and ".join(limits)
        summary = ledger.summary()
        spent = f"{ledger.spent_tokens()} tokens" + (f", ${ledger.spent_cost():.4f}" if ledger.prices else "")
        done = ", ".join(self.dir.stages()) or "none"
        refused = summary["llm_failures"].get("budget_exceeded", 0)
        return (
            f"stopped by the budget ({limit}): {spent} spent on {summary['llm_sent']} calls sent "
            f"({summary['llm_cache_hits']} answered from the cache, {refused} refused); stages done: {done}; "
            f"stage {stage} was not finished and nothing was published. Rerun the same command with a larger budget "
            "(--max-tokens, --max-cost or budget: in flows.yaml) to resume: "
            "finished stages and answered calls are reused"
        )

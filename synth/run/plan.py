"""The one plan every run follows, whatever drives it: its stages in order, what each needs before
it may start, and the `Run` step that makes it. Publishing follows the last stage.

Three schedulers walk this plan and none lists the stages again: the staged order
(`synth.run.local.run_staged`: each stage over the whole batch), the streaming scheduler
(`synth.run.streaming`: items move through the stages one by one) and the Prefect flow
(`synth.run.flows`: a task per shard, submitted as soon as what it needs is saved). Each stage's
readiness is its `grain` and `needs`:

- `CHAIN`: shards one after another, each seeing those before (self-play rounds);
- `BATCH`: one stage once every shard of each stage it needs is saved (construction, the label);
- `SHARD`: one stage per slice of `shard_size` candidates, independent of one another, each ready
  when the stages it needs are (the panel; distillation). A stage's `early` rule may start a shard
  before the batch stage it needs: a panel shard once construction has saved its slice of
  candidates (`Run.slice_saved`), a distillation shard once `Run.settled` can tell which of its
  items are published (the recipe labels item by item).
"""

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from synth.run.runner import Run
from synth.run.stage_names import CONSTRUCT, LABEL, distill_stage, round_stage, shard_stage


class Grain(StrEnum):
    CHAIN = "chain"
    BATCH = "batch"
    SHARD = "shard"


@dataclass(frozen=True)
class Stage:
    """One step of the plan."""

    kind: str
    """Names the step and the models it calls (`Recipe.stage_models(kind)`); its Prefect task's name."""
    grain: Grain
    needs: tuple[str, ...]
    """Kinds of stages that must be saved first (every shard of them; see `early`)."""
    count: Callable[[Run], int]
    """How many shards it has once the stages it needs are saved (a batch stage: 1, or 0 to skip it)."""
    name: Callable[[int], str]
    """The saved stage's name for shard `index`."""
    step: Callable[[Run, int], None] | None = None
    """Makes shard `index` (saves it unless it was saved before)."""
    async_step: Callable[[Run, int], Coroutine[Any, Any, None]] | None = None
    """The same as a coroutine: the shards of one process then share each model's request pool."""
    early: Callable[[Run, int], bool] | None = None
    """Whether shard `index` may start before the whole of the stages it needs is saved (its panel
    once construction saved its candidates, its distillation once `Run.settled` knows its items)."""
    published: bool = False
    """Its tables are the version's (the other stages' reach it through these)."""
    sized_by: str | None = None
    """The kind whose saving fixes `count` (before it, the count cannot be asked)."""

    def names(self, run: Run) -> list[str]:
        return [self.name(index) for index in range(self.count(run))]

    def make(self, run: Run, index: int) -> None:
        """Shard `index` in this process (a Prefect task runs this)."""
        if self.async_step is not None:
            asyncio.run(self.async_step(run, index))
        elif self.step is not None:
            self.step(run, index)

    def make_all(self, run: Run) -> None:
        """Every shard in this process: a chain's in order, the others' together in one event loop
        where the step is a coroutine (the number of requests in flight, not a shard's size, limits
        the work)."""
        if self.async_step is not None:
            asyncio.run(self.make_all_async(run))
            return
        for index in range(self.count(run)):
            self.make(run, index)

    async def make_all_async(self, run: Run) -> None:
        """`make_all` of a coroutine step on the running event loop."""
        assert self.async_step is not None
        if self.grain is Grain.CHAIN:
            for index in range(self.count(run)):
                await self.async_step(run, index)
            return
        await _together([self.async_step(run, index) for index in range(self.count(run))])


async def _together(stages: list[Coroutine[Any, Any, None]]) -> None:
    """Run the stages concurrently; when one fails the others still finish (and are saved), then
    the first failure is raised."""
    outcomes = await asyncio.gather(*stages, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


ROUND = Stage("round", Grain.CHAIN, (), Run.round_count, round_stage, async_step=Run.play_round)
CONSTRUCT_STAGE = Stage("construct", Grain.BATCH, ("round",), lambda run: 1, lambda _: CONSTRUCT, step=Run.construct)
ATTEMPT = Stage(
    "attempt",
    Grain.SHARD,
    ("construct",),
    Run.shard_count,
    shard_stage,
    async_step=Run.attempt,
    early=Run.slice_saved,
    sized_by="construct",
)
LABEL_STAGE = Stage(
    "label", Grain.BATCH, ("construct", "attempt"), lambda run: 1, lambda _: LABEL, step=Run.label, published=True
)
DISTILL = Stage(
    "distill",
    Grain.SHARD,
    ("attempt", "label"),
    Run.distill_count,
    distill_stage,
    async_step=Run.distill,
    early=Run.is_settled,
    published=True,
    sized_by="construct",
)

PLAN: tuple[Stage, ...] = (ROUND, CONSTRUCT_STAGE, ATTEMPT, LABEL_STAGE, DISTILL)
"""The stages in order: every stage's `needs` come before it."""


def stage_names(run: Run) -> list[str]:
    """Every stage the run saves, in plan order (known once each stage's count is: after construction)."""
    return [name for stage in PLAN for name in stage.names(run)]


def shards(run: Run, stage: Stage) -> int | None:
    """How many shards `stage` has (of an `early` stage, before that is known: those whose
    candidates are saved); None while that is not known yet."""
    return stage.count(run) if _sized(run, stage) or stage.early is not None else None


def _sized(run: Run, stage: Stage) -> bool:
    return stage.sized_by is None or complete(run, by_kind(stage.sized_by))


def complete(run: Run, stage: Stage) -> bool:
    """Every shard of `stage` is saved."""
    if not _sized(run, stage):
        return False
    return all(run.dir.done(stage.name(index)) for index in range(stage.count(run)))


def ready(run: Run, stage: Stage, index: int, staged: bool = False) -> bool:
    """Whether shard `index` of `stage` may start now: a chained shard once the one before it is
    saved; any other once the stages it needs are (of a sharded one, the same shard), or once its
    `early` rule says so. `staged`: every stage waits for the whole of every stage before it, as a
    staged run does."""
    position = PLAN.index(stage)
    needs = PLAN[:position] if staged else [by_kind(kind) for kind in stage.needs]
    if stage.grain is Grain.CHAIN and index > 0 and not run.dir.done(stage.name(index - 1)):
        return False
    if all(_need_met(run, need, stage, index) for need in needs):
        return True
    return not staged and stage.early is not None and stage.early(run, index)


def _need_met(run: Run, need: Stage, stage: Stage, index: int) -> bool:
    if need.grain is Grain.SHARD and stage.grain is Grain.SHARD and shards(run, need):
        return run.dir.done(need.name(index))
    return complete(run, need)


def by_kind(kind: str) -> Stage:
    return next(stage for stage in PLAN if stage.kind == kind)

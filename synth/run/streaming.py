"""A run with no barrier between its stages: each item goes from construction through the solver
panel and its label to distillation on its own, on one event loop.

A staged run (`synth.run.local.run_staged`) waits for every panel shard before labelling and
for the label before the first teacher rollout, so the model server idles through each stage's
tail. Here an item's panel attempts start when construction emits it; its consensus verdict is
given as soon as its own attempts are in (and, for the reader check, those of the first
`consensus.gold_calibration_items` candidates); its teacher rollouts start as soon as the recipe
can tell it will be published (`Recipe.surely_chosen`: a quota over the survivors may need every
verdict first). Everything is saved as the staged run saves it, one stage per slice of
`shard_size` candidates (`attempt-i` when the slice's attempts are in, `distill-i` when its items
are distilled), so results reach Parquet as items finish, a killed run resumes from the saved
slices and the response cache, and staged and streaming runs of the same command publish the
same version. The label stage itself runs once, over every slice, exactly as in a staged run.

The order of the stages is the plan's (`synth.run.plan.PLAN`): rounds run first, as the plan's
chained stage; each event then walks the plan's stages after construction, each with its own
handler, which knows how that stage moves item by item.
"""

import asyncio
import time
from collections.abc import Coroutine
from contextvars import Context
from dataclasses import dataclass, field
from typing import Any

from synth.llm.accounting import Ledger
from synth.pipelines.labeling import Calibration
from synth.pipelines.records import Construction, DistillShard, PanelShard, Round
from synth.progress import Progress
from synth.run.plan import ATTEMPT, CONSTRUCT_STAGE, DISTILL, LABEL_STAGE, PLAN, Grain
from synth.run.runner import Run
from synth.run.stage_names import CONSTRUCT, distill_stage, round_stage, shard_stage
from synth.run.verdicts import calibration_of, calibration_size
from synth.schemas import Item, SolverAttempt


@dataclass
class _Slice:
    """`shard_size` consecutive candidates: one panel stage and one distillation stage."""

    index: int
    items: list[Item] = field(default_factory=list)
    full: bool = False
    """Every candidate of the slice is known."""
    panel_saved: bool = False
    distill_saved: bool = False
    distill_pending: bool = False
    """Its (possibly empty) distillation stage is being made."""
    panel: tuple[Ledger, Context, float] | None = None
    """The stage's own ledger, the context its tasks start in, and when it started."""
    distill: tuple[Ledger, Context, float] | None = None


class Stream:
    """The state of one streaming run; `stream_run` drives it."""

    def __init__(self, run: Run, board, started: float, rounds_streamed: bool = False):
        """`started`: when the run began opening its world (construction's time counts from then, as
        in a staged run, where construction opens it). `rounds_streamed`: the rounds are played here,
        each one's candidates going on as it ends (`Recipe.streams_rounds`)."""
        self.run, self.recipe, self.board, self.started = run, run.recipe, board, started
        self.rounds_streamed = rounds_streamed
        self.size = run.shard_size
        self.panel_on, self.distill_on = self.recipe.runs_panel(), self.recipe.distills()
        self.per_item = self.recipe.labels_per_item()
        """Verdicts item by item; else every item waits for the label stage (`Recipe.labels_per_item`)."""
        self.candidates: list[Item] = []
        self.slices: list[_Slice] = []
        self.complete = False
        self.panel: dict[str, PanelShard] = {}
        """Item id -> its panel attempts (dropped once its slice is saved and its verdict given)."""
        self.attempts: dict[str, list[SolverAttempt]] = {}
        self.gold: dict[str, list[SolverAttempt]] = {}
        """Item id -> its gold-evidence attempts, as soon as they are in (the reader check's input)."""
        self.kept: dict[str, Item] = {}
        """Item id -> the item as it will be published (difficulty set), once consensus keeps it."""
        self.dropped: set[str] = set()
        self.released: set[str] = set()
        self.distilled: dict[str, DistillShard] = {}
        self.final: set[str] | None = None
        """The ids the label stage publishes, once it is saved."""
        self.calibration: Calibration | None = None
        self.tasks: set[asyncio.Task] = set()
        self.failure: BaseException | None = None
        self.finished = asyncio.Event()
        self.labelling = False
        self.check_scheduled = False
        self.to_decide: list[Item] = []
        """Attempted items still waiting for their verdict (for the calibration items' attempts)."""
        self.changed = False
        """A verdict was given (or construction ended) since `surely_chosen` was last asked."""
        self.dirty: set[int] = set()
        """Slices whose stages may now be ready to save."""
        self.constructing: asyncio.Task | None = None
        self.solvers: tuple[dict[str, str], str | None] = ({}, None)
        """The panel's solver name -> model identity, and its answer judge."""
        self.position: dict[str, int] = {}
        self.calibration_size = calibration_size(self.recipe)
        self.calibrating = self.calibration_size > 0
        self.handlers = {
            ATTEMPT.kind: self._panel_events,
            LABEL_STAGE.kind: self._label_when_ready,
            DISTILL.kind: self._distill_events,
        }
        """What each stage after construction does on an event, walked in the plan's order."""

    # driving
    async def go(self) -> None:
        run = self.run
        if run.dir.done(CONSTRUCT):
            self._resume_saved()
        else:
            self.constructing = self._spawn(self._construct(), self.run.context.ledger.stage_context()[1])
        self._check()
        await self.finished.wait()
        if self.failure is not None:
            # stop between items: the model work is cancelled (answers already in stay cached), but
            # construction, which calls no model unless it rephrases, finishes and is kept (rounds,
            # which do, stop too: the finished ones are saved)
            for task in list(self.tasks):
                if task is not self.constructing or self.rounds_streamed:
                    task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)
            raise self.failure

    def _spawn(self, work: Coroutine[Any, Any, None], context: Context) -> asyncio.Task:
        task = asyncio.get_running_loop().create_task(self._guarded(work), context=context)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    async def _guarded(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except asyncio.CancelledError:
            raise
        except BaseException as error:  # the first failure stops the run between items
            if self.failure is None:
                self.failure = error
            self.finished.set()

    # construction
    async def _construct(self) -> None:
        run = self.run
        if self.rounds_streamed:
            await self._construct_from_rounds()
            return
        with run.context.ledger.stage() as calls:
            rounds = run.rounds_done()
            construction = await self.recipe.construct_stream(rounds, self._emit)
        run.store.save(CONSTRUCT, construction, calls, self.started, own_budget=True)
        self._constructed(construction)

    async def _construct_from_rounds(self) -> None:
        """The rounds on this loop, in order, each saved as its stage; each round's candidates go on
        as soon as it is done (`Recipe.round_candidates`), then construction over every round."""
        run = self.run
        for index in range(run.round_count()):
            await run.play_round(index)  # found saved, or played and saved
            finished = run.store.load(Round, round_stage(index))
            for item in self.recipe.round_candidates(finished, len(self.candidates)):
                self._emit(item)
        started = time.monotonic()
        with run.context.ledger.stage() as calls:
            construction = self.recipe.construct(run.rounds_done())
        run.store.save(CONSTRUCT, construction, calls, started, own_budget=True)
        self._constructed(construction)

    def _resume_saved(self) -> None:
        """Candidates, verdicts and distillations an earlier attempt saved."""
        run = self.run
        for item in run.candidates:
            self._emit(item)
        self._constructed(run.store.load(Construction, CONSTRUCT))

    def _constructed(self, construction: Construction) -> None:
        if [item.id for item in construction.items] != [item.id for item in self.candidates]:
            raise RuntimeError("construction emitted its candidates in another order than it returned them")
        self.complete, self.changed = True, True
        if self.slices:
            self.slices[-1].full = True
            self.dirty.add(self.slices[-1].index)
        self.board.total("construct", len(self.candidates))
        self.board.total("panel", len(self.candidates))
        self._check()

    def _emit(self, item: Item) -> None:
        run = self.run
        position = len(self.candidates)
        self.candidates.append(item)
        self.position[item.id] = position
        self.board.advance("construct")
        self.board.total("panel", len(self.candidates))
        if position % self.size == 0:
            index = position // self.size
            part = _Slice(index)
            part.panel_saved = run.dir.done(shard_stage(index))
            part.distill_saved = run.dir.done(distill_stage(index))
            if part.panel_saved:
                self._load_panel(index)
            if part.distill_saved:
                for trajectory in run.store.load(DistillShard, distill_stage(index)).trajectories:
                    self.released.add(trajectory.item_id)
            self.slices.append(part)
        part = self.slices[-1]
        part.items.append(item)
        part.full = len(part.items) == self.size
        self.dirty.add(part.index)
        if self.failure is not None:
            return  # the run is stopping: construction goes on to be saved, no new item starts
        if not self.panel_on:
            if self.per_item:
                self.kept[item.id] = item
                self.changed = True
        elif part.panel_saved:
            self._attempted(item)
        else:
            self._spawn(self._attempt(item), self._scope(part, "panel")[1])
        self._schedule_check()

    # the panel and the verdicts
    def _scope(self, part: _Slice, stage: str) -> tuple[Ledger, Context, float]:
        scope = getattr(part, stage)
        if scope is None:
            ledger, context = self.run.context.ledger.stage_context()
            scope = (ledger, context, time.monotonic())
            setattr(part, stage, scope)
        return scope

    def _load_panel(self, index: int) -> None:
        shard = self.run.store.load(PanelShard, shard_stage(index))
        for attempt in shard.attempts:
            self.attempts.setdefault(attempt.item_id, []).append(attempt)
        self.solvers = (shard.solvers, shard.judge)

    async def _attempt(self, item: Item) -> None:
        if self.calibrating:
            shard = await self.recipe.attempt([item], on_gold=lambda attempts: self._gold(item, attempts))
        else:
            shard = await self.recipe.attempt([item])
        self.panel[item.id] = shard
        self.attempts[item.id] = list(shard.attempts)
        self.solvers = (shard.solvers, shard.judge)
        self.dirty.add(self.position[item.id] // self.size)
        self._attempted(item)

    def _gold(self, item: Item, attempts: list[SolverAttempt]) -> None:
        """An item's gold-evidence attempts, in before its searches end (the calibration needs only these)."""
        self.gold[item.id] = attempts
        if self.calibration is None:
            self._schedule_check()

    def _attempted(self, item: Item) -> None:
        self.board.advance("panel")
        if self.per_item:
            self.to_decide.append(item)
        self._schedule_check()

    def _calibrated(self) -> Calibration | None:
        """The reader check's inputs, once the calibration candidates' attempts are all in."""
        if self.calibration is None:
            size = self.calibration_size
            first = self.candidates[:size]
            if (len(first) < size and not self.complete) or any(
                item.id not in self.gold and item.id not in self.attempts for item in first
            ):
                return None
            # an item's gold-evidence attempts as handed over early, else those of its whole panel run
            self.calibration = calibration_of(first, {**self.attempts, **self.gold}, self.solvers)
        return self.calibration

    def _decide(self) -> None:
        """The consensus verdict of each attempted item, once the calibration items' attempts are in."""
        if self.final is not None or not self.to_decide:
            return
        calibration = self._calibrated()
        if calibration is None:
            return
        calibration = Calibration(calibration.ids, calibration.attempts, *self.solvers)
        for item in self.to_decide:
            verdict = self.recipe.decide(item, self.attempts[item.id], calibration)
            if verdict is None:
                self.dropped.add(item.id)
            else:
                self.kept[item.id] = verdict
            self.dirty.add(self.position[item.id] // self.size)
        self.to_decide, self.changed = [], True

    # saving slices, labelling, releasing
    def _schedule_check(self) -> None:
        """One `_check` after the current burst of events (a verdict or release pass walks every candidate)."""
        if not self.check_scheduled:
            self.check_scheduled = True
            asyncio.get_running_loop().call_soon(self._check)

    def _check(self) -> None:
        self.check_scheduled = False
        if self.failure is not None:
            return
        try:
            for stage in PLAN[PLAN.index(CONSTRUCT_STAGE) + 1 :]:
                self.handlers[stage.kind]()
            self.dirty.clear()
            if self._done():
                self.finished.set()
        except BaseException as error:  # a failure gate or the budget: stop between items
            self.failure = error
            self.finished.set()

    def _panel_events(self) -> None:
        self._save_panel_slices()
        self._decide()

    def _distill_events(self) -> None:
        self._release()
        self._save_distill_slices()

    def _save_panel_slices(self) -> None:
        for part in [self.slices[index] for index in sorted(self.dirty)]:
            if part.panel_saved or not part.full or any(item.id not in self.panel for item in part.items):
                continue
            shards = [self.panel[item.id] for item in part.items]
            merged = PanelShard(
                [attempt for shard in shards for attempt in shard.attempts],
                [trajectory for shard in shards for trajectory in shard.trajectories],
                {name: model for shard in shards for name, model in shard.solvers.items()},
                judge=shards[0].judge,
            )
            ledger, _, started = self._scope(part, "panel")
            self.run.store.save(shard_stage(part.index), merged, ledger, started)
            part.panel_saved = True
            for item in part.items:
                del self.panel[item.id]

    def _release(self) -> None:
        """Start the teacher on every kept item that will surely be published."""
        if not self.distill_on:
            return
        if not self.changed:
            return
        self.changed = False
        waiting = [item_id for item_id in self.kept if item_id not in self.released]
        if not waiting:
            return
        sure = (
            self.final
            if self.final is not None
            else self.recipe.surely_chosen(self.candidates, self.dropped, self.complete)
        )
        for item_id in waiting:
            if item_id in sure:
                self.released.add(item_id)
                part = self.slices[self.position[item_id] // self.size]
                if not part.distill_saved:
                    self._spawn(self._distill(self.kept[item_id]), self._scope(part, "distill")[1])
        self.board.total("distill", len(self.released))

    async def _distill(self, item: Item) -> None:
        self.distilled[item.id] = await self.recipe.distill([item])
        self.board.advance("distill")
        self.dirty.add(self.position[item.id] // self.size)
        self._schedule_check()

    def _settled(self, item_id: str) -> bool:
        """Whether the item's place in its slice's distillation is known (and, if kept, done)."""
        if self.final is not None:
            return item_id not in self.final or item_id in self.distilled
        if item_id in self.dropped:
            return True
        return item_id in self.released and item_id in self.distilled

    def _save_distill_slices(self) -> None:
        if not self.distill_on:
            return
        for part in [self.slices[index] for index in sorted(self.dirty)]:
            if part.distill_saved or part.distill_pending or not part.full:
                continue
            if not all(self._settled(item.id) for item in part.items):
                continue
            chosen = [item for item in part.items if item.id in self.distilled]
            if chosen:
                shards = [self.distilled.pop(item.id) for item in chosen]
                merged = DistillShard(
                    [trajectory for shard in shards for trajectory in shard.trajectories],
                    teacher=shards[0].teacher,
                    protocol=shards[0].protocol,
                    items=sum(shard.items for shard in shards),
                )
                ledger, _, started = self._scope(part, "distill")
                self.run.store.save(distill_stage(part.index), merged, ledger, started)
                part.distill_saved = True
            else:  # nothing of the slice is published: its stage is the teacher on no item, as staged
                part.distill_pending = True
                self._spawn(self._empty_distill(part), self._scope(part, "distill")[1])

    async def _empty_distill(self, part: _Slice) -> None:
        shard = await self.recipe.distill([])
        ledger, _, started = self._scope(part, "distill")
        self.run.store.save(distill_stage(part.index), shard, ledger, started)
        part.distill_saved, part.distill_pending = True, False
        self.dirty.add(part.index)
        self._schedule_check()

    def _label_when_ready(self) -> None:
        """The label stage (consensus over every slice, quotas, statistics), once every slice's
        panel stage is saved; then every item it publishes is released."""
        if self.final is not None or self.labelling or not self.complete:
            return
        if self.panel_on and not all(part.panel_saved for part in self.slices):
            return
        self.labelling = True
        self._spawn(self._label(), self.run.context.ledger.stage_context()[1])

    async def _label(self) -> None:
        run = self.run
        await asyncio.to_thread(run.label)  # a CPU pass over the batch; the teacher goes on meanwhile
        final = {item.id: item for item in run.labeled}
        early = self.released - set(final)
        if early:  # `surely_chosen` promised what the label did not keep: never publish it silently
            raise RuntimeError(
                f"{len(early)} item(s) were distilled early but the label stage did not keep them "
                f"(e.g. {sorted(early)[0]}): recipe {run.recipe.name}'s surely_chosen is wrong"
            )
        self.kept = final
        self.final = set(final)
        self.changed = True
        self.dirty.update(range(len(self.slices)))
        self.board.advance("label", 1)
        self.board.total("label", 1)
        self._schedule_check()

    def _done(self) -> bool:
        if self.final is None:
            return False
        return not self.distill_on or all(part.distill_saved for part in self.slices)


IN_PROCESS_BACKENDS = ("embedded", "vllm")
"""Backends whose engine runs in this process (`synth.llm.models.ModelSpec.backend`)."""


def _serves_in_process(run: Run) -> bool:
    """Whether a model the panel or the teacher calls runs in this process. Its engine thread then
    shares the CPU (and the GIL) with construction: measured with the embedded model on 2 cores,
    streaming construction into it took 234 s for what 111 s does when construction comes first
    (construction starved, the engine fed one item at a time). Such a run constructs first and
    streams from the panel on, where the engine gets every candidate at once."""
    context, recipe = run.context, run.recipe
    names = {context.llm or name for name in [*recipe.stage_models("attempt"), *recipe.stage_models("distill")]}
    specs = [context.models.get(name) for name in names if name not in context.backends]  # injected: not ours
    return any(spec is not None and spec.backend in IN_PROCESS_BACKENDS for spec in specs)


def stream_run(run: Run) -> None:
    """The run's stages with no barrier between them (see the module docstring)."""
    in_process = _serves_in_process(run)
    rounds_streamed = run.recipe.streams_rounds() and not in_process
    for stage in PLAN:
        if stage.grain is Grain.CHAIN and not rounds_streamed:  # each round sees the ones before: first
            stage.make_all(run)
    shown, started = run.context.progress, time.monotonic()
    streams = (run.recipe.streams_construction() or rounds_streamed) and not in_process
    if not streams:
        CONSTRUCT_STAGE.make_all(run)  # made at once, then streamed on (see `_serves_in_process`)
    if run.recipe.config.panel.enabled or run.recipe.distills():  # the shared panel or the teacher searches it
        run.recipe.world  # noqa: B018 - opened (and its index built) before the item logs are muted
    run.context.progress = Progress(enabled=False)  # per-item logs would drown the bars
    try:
        recipe = run.recipe
        bars = ["construct", *(["panel"] if recipe.runs_panel() else []), "label"]
        with shown.board(bars + (["distill"] if recipe.distills() else [])) as board:
            asyncio.run(Stream(run, board, started, rounds_streamed).go())
    finally:
        run.context.progress = shown

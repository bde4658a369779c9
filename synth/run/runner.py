"""One run of a recipe as resumable stages: rounds (self-play recipes: one stage per round, in
order), construct, attempt on each panel shard (a slice of `shard_size` candidates), label
(consensus and quotas), distill each shard's labeled items (optional), publish. The runner knows
recipes only through `Recipe` (`synth.pipelines.base`).

`synth generate` streams items through the stages in one process with no barrier between them
(`Run.stream`, `synth.run.streaming`); `--staged` drives them in order, a stage's shards together in one
event loop, as the Prefect flows (`synth.run.flows`) do with a task per stage or shard, so
shards can run on other workers. Every way saves the same stages to the run's folder
(`synth.store.workdir`) as they finish, and a rerun after a crash skips the stages already saved:
the model calls of finished shards are not made again, and those of the shards that were cut off
come from the response cache.
"""

import asyncio
import os
import socket
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar, cast

from synth.config import FrozenConfig, build_config
from synth.errors import BudgetExhausted, ConfigError, NotFoundError, NothingSurvived
from synth.llm.accounting import Ledger, Price
from synth.llm.base import LLMBackend
from synth.llm.gate import check_stage
from synth.pipelines.base import (
    Construction,
    DistillShard,
    PanelShard,
    Recipe,
    RecipeResult,
    Round,
    RunContext,
    StageRecord,
)
from synth.pipelines.recipes import get_recipe
from synth.progress import Progress
from synth.redact import redact, redact_value
from synth.run.flows_file import declared_models, model_references
from synth.run.limits import RunLimits
from synth.run.stage_names import CONSTRUCT, LABEL, distill_stage, round_stage, shard_stage
from synth.run.streaming import stream_run
from synth.schemas import DatasetVersion, Item, RunRecord, RunStatus
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.publish import VersionSpec, publish_version, validate_dataset_name
from synth.store.workdir import RunDir, StageOutput

DEFAULT_SHARD_SIZE = 64
"""Items per panel shard: the unit of resumption and of distribution over workers."""
S = TypeVar("S", bound=StageRecord)


@dataclass(frozen=True)
class Stage:
    """One step of the plan every run follows, locally or as Prefect tasks."""

    kind: str
    """Names the step and the models it calls (`Recipe.stage_models(kind)`)."""
    step: str
    """The `Run` method that makes one shard (given its index) or the whole stage."""
    task: str
    """Its task's name in a Prefect flow."""
    shards: Callable[["Run"], int] | None = None
    """How many shards the step has once the steps before it are done; None: a single stage."""
    together: str | None = None
    """The `Run` method that makes every shard in one event loop (panel, distillation); None: shards
    run one after another, each seeing those before (rounds)."""

    def count(self, run: "Run") -> int:
        return 1 if self.shards is None else self.shards(run)


STAGES: tuple[Stage, ...] = (
    Stage("round", "play_round", "round", lambda run: run.round_count()),
    Stage("construct", "construct", "construct"),
    Stage("attempt", "attempt", "panel-shard", lambda run: run.shard_count(), together="attempt_all"),
    Stage("label", "label", "label"),
    Stage("distill", "distill", "distill-shard", lambda run: run.distill_count(), together="distill_all"),
)
"""The stage plan, in order; publishing follows. `run_locally` and the Prefect flow both walk it."""


async def _together(stages: list[Coroutine[Any, Any, None]]) -> None:
    """Run the stages concurrently; when one fails the others still finish (and are saved), then
    the first failure is raised."""
    outcomes = await asyncio.gather(*stages, return_exceptions=True)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            raise outcome


@dataclass(frozen=True)
class RunRequest:
    """Everything a run needs, serialisable, so a flow can hand it to tasks on other machines."""

    recipe: str
    config: dict[str, Any] = field(default_factory=dict)
    """The recipe's parameters as nested values (defaults fill the rest): validated once, in `open_run`,
    and written to the run folder as the validated config."""
    dataset: str | None = None
    llm: str | None = None
    flows_file: str | None = None
    shard_size: int = DEFAULT_SHARD_SIZE
    limits: dict | None = None
    """RunLimits as JSON (budget, failure gate); None keeps what the run folder has, else the defaults."""
    staged: bool = False
    """Run stage after stage, each waiting for the whole batch (as the Prefect flows do), instead of
    streaming items through them (`synth.run.streaming`). Either way the same stages are saved and the
    same version is published."""


def open_run(settings: Settings, request: RunRequest) -> RunDir:
    """Validate the request and open its run folder: the unfinished one with the same recipe,
    dataset, config and models, or a new one."""
    return prepare_run(settings, request)[0]


def prepare_run(settings: Settings, request: RunRequest) -> tuple[RunDir, FrozenConfig]:
    """`open_run`, with the validated config, so a run made in this process does not validate it again."""
    recipe = get_recipe(request.recipe)
    dataset = validate_dataset_name(request.dataset or recipe.name)
    if request.shard_size < 1:
        raise ConfigError(f"shard size must be at least 1, got {request.shard_size}")
    config = recipe.pin(build_config(recipe.Config, request.config, f"recipe {request.recipe}"), settings)
    flows_file = Path(request.flows_file) if request.flows_file else None
    declared = declared_models(flows_file)
    check_models(config.model_dump(mode="json"), declared, request.llm, request.recipe)
    models = {name: spec.model_dump(mode="json") for name, spec in declared.items()}
    run = RunDir.open(
        settings, request.recipe, dataset, config.model_dump(mode="json"), {"models": models, "llm": request.llm}
    )
    limits = RunLimits.model_validate(request.limits) if request.limits is not None else None
    saved = run.info.get("request")
    if saved is None or limits is not None:  # a rerun may bring a larger budget
        limits = limits or RunLimits()
        run.update(
            request={
                **(saved or {}),
                "llm": request.llm,
                "flows_file": request.flows_file,
                "shard_size": request.shard_size,
                "limits": limits.model_dump(mode="json"),
            }
        )
    return run, config


def check_models(config: dict, declared: dict, llm: str | None, recipe: str) -> None:
    """Every model the config names (or `--llm`) is declared: said before any stage runs, not
    after construction has spent minutes."""
    named = (
        [("--llm", llm)]
        if llm
        else [(".".join(map(str, location)), name) for location, name in model_references(config)]
    )
    for where, name in named:
        if name not in declared:
            raise ConfigError(
                f"{where} of recipe {recipe} names model {name!r}, which is not declared; declared models: "
                f"{', '.join(declared)} (declare more under `models:` in flows.yaml; see `synth models list`)"
            )


class Run:
    """The stages of one run folder. Cheap to create; the recipe's world is built on first use.
    `backends`: declared model name -> a backend to use instead (see `RunContext.backends`)."""

    def __init__(
        self,
        settings: Settings,
        run_dir: RunDir,
        progress: Progress | None = None,
        runner: str = "local",
        backends: dict[str, LLMBackend] | None = None,
        config: FrozenConfig | None = None,
    ):
        """`config`: the run's validated config when this process just made it (`prepare_run`); a
        worker or a resumption validates the one the run folder holds."""
        self.settings, self.dir, self.runner = settings, run_dir, runner
        info = run_dir.info
        self.recipe_class = get_recipe(info["recipe"])
        self.config = config or build_config(self.recipe_class.Config, info["config"], f"recipe {info['recipe']}")
        request = info.get("request", {})
        self.shard_size = request.get("shard_size", DEFAULT_SHARD_SIZE)
        self.limits = RunLimits.model_validate(request.get("limits") or {})
        self.resumed = run_dir.stages()
        self.context = RunContext(
            settings,
            progress or Progress(enabled=False),
            llm=request.get("llm"),
            models=declared_models(Path(request["flows_file"]) if request.get("flows_file") else None),
            dataset=info["dataset"],
            backends=dict(backends or {}),
        )
        self.context.ledger.budget = self.limits.budget
        for stage in self.resumed:  # the budget covers what earlier attempts spent
            self.context.ledger.absorb(run_dir.meta(stage).get("llm", []))

    @cached_property
    def recipe(self) -> Recipe:
        return self.recipe_class(self.config, self.context)

    def _stage(self, name: str, work: Callable[[], StageRecord]) -> None:
        """Run `work` and save what it returns as stage `name`, unless an earlier attempt saved it."""
        if self.dir.done(name):
            self.context.progress.log(f"{name}: done earlier, skipped")
            return
        started = time.monotonic()
        with self.context.ledger.stage() as calls:
            record = work()
        self._save(name, record, calls, started)

    async def _stage_async(self, name: str, work: Callable[[], Awaitable[StageRecord]]) -> None:
        """`_stage` for a coroutine stage; its calls are told apart from those of the stages
        running beside it in the same event loop."""
        if self.dir.done(name):
            self.context.progress.log(f"{name}: done earlier, skipped")
            return
        started = time.monotonic()
        with self.context.ledger.stage() as calls:
            record = await work()
        self._save(name, record, calls, started)

    def _save(self, name: str, record: StageRecord, calls: Ledger, started: float, own_budget: bool = False) -> None:
        """Save a finished stage, unless the budget or the failure gate stops the run. `own_budget`:
        only a call of this stage refused by the budget stops it (a stage that finished while others
        spent the budget, e.g. a streaming run's construction, is kept)."""
        rows = calls.export()
        ledger = self.context.ledger
        refused = any(row["failures"].get("budget_exceeded") for row in rows)
        if refused if own_budget else ledger.exhausted:
            raise BudgetExhausted(self._budget_message(name))
        check_stage(name, rows, ledger, self.limits.failures)
        output = record.to_output()
        busy, now = time.monotonic() - started, time.time()  # one clock reading: the interval is `busy` long
        output.meta.update(
            seconds=round(busy, 2),
            interval=[round(now - busy, 3), round(now, 3)],  # wall clock, for the run's wall time
            llm=rows,
            prices={model: price.model_dump() for model, price in ledger.prices.items()},
            worker=f"{os.getpid()}@{socket.gethostname()}",
        )
        self.dir.save(name, output)

    def _load(self, kind: type[S], name: str) -> S:
        return kind.from_output(self.dir.load(name))

    def _budget_message(self, stage: str) -> str:
        budget, ledger = self.limits.budget, self.context.ledger
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

    def round_count(self) -> int:
        """Rounds of a recipe that plays them (each depends on the one before)."""
        return self.recipe.rounds()

    def rounds_done(self) -> list[Round]:
        """Every round's saved record, in order."""
        return [self._load(Round, round_stage(index)) for index in range(self.round_count())]

    def play_round(self, index: int) -> None:
        earlier = [self._load(Round, round_stage(before)) for before in range(index)]
        self._stage(round_stage(index), lambda: self.recipe.play_round(index, earlier))

    def step(self, stage: Stage, index: int = 0) -> None:
        """Shard `index` of `stage` (the whole stage if it has no shards): what a Prefect task runs."""
        make = getattr(self, stage.step)
        if stage.shards is None:
            make()
        else:
            make(index)

    def run_stage(self, stage: Stage) -> None:
        """Every shard of `stage` in this process: together in one event loop where the stage says so
        (they share each model's concurrency pool), else one after another."""
        if stage.together is not None:
            getattr(self, stage.together)()
            return
        for index in range(stage.count(self)):
            self.step(stage, index)

    def construct(self) -> int:
        """Run (or reuse) the rounds, if any, and the construction stage; returns the number of panel shards."""
        rounds = self.round_count()
        for index in range(rounds):
            self.play_round(index)
        self._stage(
            CONSTRUCT, lambda: self.recipe.construct([self._load(Round, round_stage(index)) for index in range(rounds)])
        )
        return self.shard_count()

    @cached_property
    def candidates(self) -> list[Item]:
        """The construction stage's items (read once; only after that stage is saved)."""
        return cast(list[Item], self.dir.load(CONSTRUCT).tables["items"])

    def part_count(self) -> int:
        """Slices of `shard_size` candidates, in construction order: the panel's shards and the
        distillation's (an item is distilled in the shard it was attempted in)."""
        return -(-len(self.candidates) // self.shard_size)

    def shard_count(self) -> int:
        return self.part_count() if self.recipe.runs_panel() else 0

    def shard_items(self, index: int) -> list[Item]:
        return self.candidates[index * self.shard_size : (index + 1) * self.shard_size]

    async def _attempt(self, index: int) -> None:
        async def work() -> PanelShard:
            shard = self.shard_items(index)
            self.context.progress.log(f"panel shard {index + 1}/{self.shard_count()}: {len(shard)} items")
            return await self.recipe.attempt(shard)

        await self._stage_async(shard_stage(index), work)

    def attempt(self, index: int) -> None:
        """Panel shard `index` alone (a Prefect task)."""
        asyncio.run(self._attempt(index))

    def attempt_all(self) -> None:
        """Every panel shard in one event loop: their requests share each model's concurrency pool,
        so the number of requests in flight, not a shard's size, limits the work."""
        asyncio.run(_together([self._attempt(index) for index in range(self.shard_count())]))

    def label(self) -> int:
        """Consensus over every panel shard, quotas and statistics, saved as one stage; returns the
        number of distillation shards."""

        def work() -> RecipeResult:
            construction = self._load(Construction, CONSTRUCT)
            shards = [self._load(PanelShard, shard_stage(index)) for index in range(self.shard_count())]
            return self.recipe.label(construction, shards)

        self._stage(LABEL, work)
        return self.distill_count()

    @cached_property
    def labeled(self) -> list[Item]:
        """The items the label stage publishes (read once; only after that stage is saved)."""
        return cast(list[Item], self.dir.load(LABEL).tables["items"])

    def distill_count(self) -> int:
        return self.part_count() if self.recipe.distills() else 0

    def distill_items(self, index: int) -> list[Item]:
        """The labeled items of candidate shard `index`, in construction order."""
        labeled = {item.id: item for item in self.labeled}
        return [labeled[item.id] for item in self.shard_items(index) if item.id in labeled]

    async def _distill(self, index: int) -> None:
        async def work() -> DistillShard:
            items = self.distill_items(index)
            self.context.progress.log(f"distill shard {index + 1}/{self.distill_count()}: {len(items)} items")
            return await self.recipe.distill(items)

        await self._stage_async(distill_stage(index), work)

    def distill(self, index: int) -> None:
        """Distillation shard `index` alone (a Prefect task)."""
        asyncio.run(self._distill(index))

    def distill_all(self) -> None:
        """Every distillation shard in one event loop (see `attempt_all`)."""
        asyncio.run(_together([self._distill(index) for index in range(self.distill_count())]))

    def stream(self) -> None:
        """Every stage with no barrier between them: items flow from construction through the panel
        and their labels to distillation (`synth.run.streaming`); rounds, if any, come first, in order."""
        for index in range(self.round_count()):
            self.play_round(index)
        stream_run(self)

    def publish(
        self, flow_run_id: str | None = None, ui_url: str | None = None, resumed: list[str] | None = None
    ) -> DatasetVersion:
        """Consensus over every shard, then one atomic dataset version; the run is recorded in the
        catalog. `resumed`: the stages found done when the run (re)started, if not when this object was made."""
        labeled = self.dir.load(LABEL)
        distilled = [self.dir.load(distill_stage(index)) for index in range(self.distill_count())]
        started = time.monotonic()
        result = RecipeResult.from_output(labeled)
        if distilled:
            result = self.recipe.add_distillation(result, [DistillShard.from_output(shard) for shard in distilled])
        # metadata alone for the stages whose tables the label stage already merged
        merged = (
            *map(round_stage, range(self.round_count())),
            CONSTRUCT,
            *map(shard_stage, range(self.shard_count())),
        )
        earlier = [StageOutput(meta=self.dir.meta(name)) for name in merged]
        stages = [*earlier, labeled, *distilled]
        names = [*merged, LABEL, *map(distill_stage, range(self.distill_count()))]
        ledger = Ledger(prices=dict(self.context.ledger.prices))  # every stage's calls, whichever process made them
        for stage in stages:
            ledger.absorb(stage.meta.get("llm", []))
            ledger.prices.update(
                {model: Price.model_validate(price) for model, price in stage.meta.get("prices", {}).items()}
            )
        publishing = time.monotonic() - started
        busy = sum(stage.meta.get("seconds", 0.0) for stage in stages) + publishing
        # concurrent shards overlap: the run's wall time is the union of its stages' intervals
        now = time.time()
        wall = wall_seconds(
            [stage.meta["interval"] for stage in stages if "interval" in stage.meta] + [[now - publishing, now]]
        )
        timing = stage_timing(names, stages) | {"publish": {"wall": round(publishing, 2), "busy": round(publishing, 2)}}
        llm_summary = {"llm": ledger.summary()} if ledger.totals or self.context.session is not None else {}
        info = self.dir.info
        items = len(result.tables.get("items", []))
        if items == 0:
            error = NothingSurvived(
                f"{info['recipe']} run {self.dir.id}: no item survived ({_drops(result.funnel)}); nothing was "
                "published. Change what makes candidates (another seed, graph or corpus, max_attempts_per_item, a "
                "looser check) and run again; the stages done so far are kept"
            )
            self.record(status="failed", error=error, funnel=result.funnel, summary=result.statistics | llm_summary)
            raise error
        spec = VersionSpec(
            name=info["dataset"],
            recipe=info["recipe"],
            config=info["config"],
            models=result.models,
            kg_snapshot=result.kg_snapshot,
            seed=info["config"].get("seed"),
            parent=result.parent,
            funnel=result.funnel,
            summary={
                "seconds": round(wall, 2),
                "busy_seconds": round(busy, 2),
                "stage_seconds": timing,
                "items_per_second": round(items / wall, 3) if wall else None,
                "run_id": self.dir.id,
                **result.statistics,
                **llm_summary,
            },
        )
        version = publish_version(self.settings, spec, result.tables)
        self.dir.update(status="published", version=version.version)
        self.record(status="published", version=version, flow_run_id=flow_run_id, ui_url=ui_url, resumed=resumed)
        return version

    def published_version(self) -> DatasetVersion | None:
        """The version this run published, if it did (a rerun of a finished command), with the
        run's catalog row written if a kill skipped it."""
        if self.dir.info.get("status") != "published":
            return None
        with Catalog.open(self.settings, read_only=True) as catalog:
            try:
                version = catalog.resolve(f"{self.dir.info['dataset']}@{self.dir.info['version']}")
            except NotFoundError:  # the catalog lost it: publishing again finds the folder by run id
                return None
            try:
                recorded = catalog.run(self.dir.id).status == "published"
            except NotFoundError:
                recorded = False
        self.context.progress.log(
            f"this run ({self.dir.id}) already published {version.ref}; change --seed or a parameter for new items"
        )
        if not recorded:
            self.record(status="published", version=version)
        return version

    def record(
        self,
        status: RunStatus,
        version: DatasetVersion | None = None,
        error: BaseException | None = None,
        flow_run_id: str | None = None,
        ui_url: str | None = None,
        resumed: list[str] | None = None,
        funnel: list | None = None,
        summary: dict | None = None,
    ) -> None:
        """Write this run's row to the catalog (`synth runs list`); `error`: why it failed; `funnel` and
        `summary`: a run that published nothing still says where its candidates went."""
        info = self.dir.info
        run = RunRecord(
            run_id=self.dir.id,
            dataset=info["dataset"],
            recipe=info["recipe"],
            status=status,
            started_at=datetime.fromisoformat(info["started_at"]),
            finished_at=datetime.now(UTC),
            version=version.version if version else None,
            runner=self.runner,
            flow_run_id=flow_run_id,
            ui_url=ui_url,
            stages=self.dir.stages(),
            resumed_stages=self.resumed if resumed is None else resumed,
            funnel=version.funnel if version else redact_value(funnel or []),
            summary=version.summary
            if version
            else summary
            if summary is not None
            else ({"llm": self.context.ledger.summary()} if self.context.ledger.totals else {}),
            error=redact(f"{type(error).__name__}: {error}")[:500] if error is not None else None,
        )
        self.dir.write_record(run)  # first: the catalog is an index a reindex rebuilds from the run folders
        with Catalog.open(self.settings) as catalog:
            catalog.record_run(run)

    def close(self) -> None:
        if self.context.session is not None:
            asyncio.run(self.context.session.aclose())
            self.context.session = None


def stage_timing(names: list[str], stages: list[StageOutput]) -> dict[str, dict[str, float]]:
    """Wall and busy seconds per kind of stage (every `attempt-*` shard together, ...)."""
    kinds: dict[str, list[dict]] = {}
    for name, stage in zip(names, stages, strict=True):
        kinds.setdefault(name.split("-")[0], []).append(stage.meta)
    return {
        kind: {
            "wall": round(wall_seconds([meta["interval"] for meta in metas if "interval" in meta]), 2),
            "busy": round(sum(meta.get("seconds", 0.0) for meta in metas), 2),
        }
        for kind, metas in kinds.items()
    }


def wall_seconds(intervals: list[list[float]]) -> float:
    """Seconds covered by the union of [start, end] wall-clock intervals: time the run was working,
    whatever ran at once, and without the pause between a killed run and its resumption."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def run_locally(
    settings: Settings,
    request: RunRequest,
    progress: Progress | None = None,
    backends: dict[str, LLMBackend] | None = None,
) -> DatasetVersion:
    """Every stage in order in this process (what `synth generate` does); a run published
    earlier returns its version (nothing is made or published twice)."""
    run_dir, config = prepare_run(settings, request)
    run = Run(settings, run_dir, progress, backends=backends, config=config)
    try:
        earlier = run.published_version()
        if earlier is not None:
            return earlier
        if request.staged:
            for stage in STAGES:
                run.run_stage(stage)
        else:
            run.stream()
        return run.publish()
    except BudgetExhausted as error:
        run.record(status="stopped", error=error)
        raise
    except NothingSurvived:
        raise  # recorded by `publish`, with its funnel
    except Exception as error:
        run.record(status="failed", error=error)
        raise
    finally:
        run.close()
        run.dir.release()


def _drops(funnel) -> str:
    """The largest reasons candidates were dropped for, as "stage: reason count" (up to five)."""
    drops = sorted(
        ((count, f"{stage.stage}: {reason}") for stage in funnel for reason, count in stage.dropped.items()),
        reverse=True,
    )
    return "; ".join(f"{where} {count:,}" for count, where in drops[:5]) or "no candidate was made"

"""One run of a recipe: its request, its folder, and the steps that make its stages. Rounds
(self-play recipes: one stage per round, in order), construct, attempt on each panel shard (a slice
of `shard_size` candidates), label (consensus and quotas), distill each shard's published items
(optional); `synth.run.publishing` then publishes. The runner knows recipes only through `Recipe`
(`synth.pipelines.base`).

Which step runs when is the plan's (`synth.run.plan`), walked by a scheduler: streaming
(`synth.run.streaming`, what `synth generate` does), staged (`--staged`) or the Prefect flow
(`synth.run.flows`, a task per shard, so shards can run on other workers). Every way saves the
same stages to the run's folder (`Run.store`) as they finish, and a rerun after a crash skips the
stages already saved: the model calls of finished shards are not made again, and those of the
shards that were cut off come from the response cache.
"""

import asyncio
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any, cast

from synth.config import FrozenConfig, build_config
from synth.errors import BudgetExhausted, ConfigError, NotFoundError, NothingSurvived
from synth.llm.accounting import Ledger
from synth.llm.base import LLMBackend
from synth.llm.models import ModelSpec
from synth.pipelines.base import (
    Construction,
    DistillShard,
    PanelShard,
    Recipe,
    RecipeResult,
    Round,
    RunContext,
)
from synth.pipelines.recipes import get_recipe
from synth.pipelines.records import CandidateSlice
from synth.progress import Progress
from synth.redact import redact, redact_value
from synth.run.flows_file import declared_models, model_references
from synth.run.limits import RunLimits
from synth.run.stage_names import CONSTRUCT, LABEL, distill_stage, round_stage, shard_stage, slice_stage
from synth.run.stage_store import StageStore
from synth.run.verdicts import Verdicts
from synth.schemas import DatasetVersion, Item, RunRecord, RunStatus
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.publish import validate_dataset_name
from synth.store.workdir import RunDir

DEFAULT_SHARD_SIZE = 64
"""Items per panel shard: the unit of resumption and of distribution over workers."""


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
    """Run stage after stage, each waiting for the whole batch, instead of streaming items through
    them (`synth.run.streaming`). Either way the same stages are saved and the same version is published."""
    slices: bool = False
    """Construction saves each `shard_size` candidates as it makes them (`Run.construct`), so a
    scheduler can start their panel shard before construction ends (the streaming Prefect flow)."""


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
                "models": models,  # what a worker on another machine, without the flows file, calls
                "shard_size": request.shard_size,
                "slices": request.slices,
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


def _run_models(request: dict) -> dict[str, ModelSpec]:
    """The models the run declared, as its folder keeps them (a run folder from before it kept
    them: read from its flows file again)."""
    if "models" in request:
        return {name: ModelSpec.model_validate(spec) for name, spec in request["models"].items()}
    return declared_models(Path(request["flows_file"]) if request.get("flows_file") else None)


class Run:
    """The stages of one run folder, each a step a scheduler (`synth.run.plan`) calls with a shard
    index. Cheap to create; the recipe's world is built on first use. `backends`: declared model
    name -> a backend to use instead (see `RunContext.backends`)."""

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
        self.slices = bool(request.get("slices"))
        self._slices: dict[int, list[Item]] = {}
        self.limits = RunLimits.model_validate(request.get("limits") or {})
        self.resumed = run_dir.stages()
        self.context = RunContext(
            settings,
            progress or Progress(enabled=False),
            llm=request.get("llm"),
            models=_run_models(request),
            dataset=info["dataset"],
            backends=dict(backends or {}),
        )
        self.context.ledger.budget = self.limits.budget
        for stage in self.resumed:  # the budget covers what earlier attempts spent
            self.context.ledger.absorb(run_dir.meta(stage).get("llm", []))
        self.store = StageStore(run_dir, self.context.ledger, self.limits, lambda: self.context.progress)
        self.verdicts = Verdicts(self.store)

    @cached_property
    def recipe(self) -> Recipe:
        return self.recipe_class(self.config, self.context)

    # the steps (`synth.run.plan.PLAN` says in which order and when each may start)
    def round_count(self) -> int:
        """Rounds of a recipe that plays them (each depends on the one before)."""
        return self.recipe.rounds()

    def rounds_done(self) -> list[Round]:
        """Every round's saved record, in order."""
        return [self.store.load(Round, round_stage(index)) for index in range(self.round_count())]

    async def play_round(self, index: int) -> None:
        """Round `index`, once the rounds before it are saved."""

        async def work() -> Round:
            earlier = [self.store.load(Round, round_stage(before)) for before in range(index)]
            return await self.recipe.play_round(index, earlier)

        await self.store.make_async(round_stage(index), work)

    def construct(self, index: int = 0) -> None:
        """The construction stage, from the saved rounds (`index`: a batch stage has only shard 0).
        With `slices`, each full slice of candidates is saved as soon as construction has made it."""
        if self.slices and self.recipe.streams_construction():
            self.store.make(CONSTRUCT, self._construct_in_slices)
        else:
            self.store.make(CONSTRUCT, lambda: self.recipe.construct(self.rounds_done()))

    def _construct_in_slices(self) -> Construction:
        made: list[Item] = []

        def emit(item: Item) -> None:
            made.append(item)
            if len(made) % self.shard_size == 0:
                index = len(made) // self.shard_size - 1
                if not self.dir.done(slice_stage(index)):  # a rerun makes the same candidates again
                    started = time.monotonic()
                    part = CandidateSlice(made[-self.shard_size :])
                    self.store.save(slice_stage(index), part, Ledger(), started, own_budget=True)

        return asyncio.run(self.recipe.construct_stream(self.rounds_done(), emit))

    @cached_property
    def candidates(self) -> list[Item]:
        """The construction stage's items (read once; only after that stage is saved)."""
        return cast(list[Item], self.dir.load(CONSTRUCT).tables["items"])

    def constructed(self) -> bool:
        return self.dir.done(CONSTRUCT)

    def slice_saved(self, index: int) -> bool:
        """Whether slice `index` of the candidates is known (before construction ends, see `slices`)."""
        return self.constructed() or self.dir.done(slice_stage(index))

    def known_candidates(self) -> list[Item]:
        """The candidates made so far, in order (all of them once construction is saved)."""
        if self.constructed():
            return self.candidates
        return [item for index in range(self.part_count()) for item in self.shard_items(index)]

    def part_count(self) -> int:
        """Slices of `shard_size` candidates, in construction order: the panel's shards and the
        distillation's (an item is distilled in the shard it was attempted in). Before construction
        is saved: the slices it saved so far (see `slices`)."""
        if self.constructed():
            return -(-len(self.candidates) // self.shard_size)
        count = 0
        while self.dir.done(slice_stage(count)):
            count += 1
        return count

    def shard_count(self) -> int:
        return self.part_count() if self.recipe.runs_panel() else 0

    def shard_items(self, index: int) -> list[Item]:
        if not self.constructed():  # a slice saved while construction goes on (read once)
            if index not in self._slices:
                self._slices[index] = self.store.load(CandidateSlice, slice_stage(index)).items
            return self._slices[index]
        return self.candidates[index * self.shard_size : (index + 1) * self.shard_size]

    async def attempt(self, index: int) -> None:
        """Panel shard `index`."""

        async def work() -> PanelShard:
            shard = self.shard_items(index)
            self.context.progress.log(f"panel shard {index + 1}/{self.shard_count()}: {len(shard)} items")
            return await self.recipe.attempt(shard)

        await self.store.make_async(shard_stage(index), work)

    def label(self, index: int = 0) -> None:
        """Consensus over every panel shard, quotas and statistics, saved as one stage."""

        def work() -> RecipeResult:
            construction = self.store.load(Construction, CONSTRUCT)
            shards = [self.store.load(PanelShard, shard_stage(index)) for index in range(self.shard_count())]
            return self.recipe.label(construction, shards)

        self.store.make(LABEL, work)

    @cached_property
    def labeled(self) -> list[Item]:
        """The items the label stage publishes (read once; only after that stage is saved)."""
        return cast(list[Item], self.dir.load(LABEL).tables["items"])

    def distill_count(self) -> int:
        return self.part_count() if self.recipe.distills() else 0

    def settled(self, index: int) -> list[Item] | None:
        """The items of candidate shard `index` the label stage publishes, as it publishes them, once
        that is known: after the label stage, or before it where the recipe decides item by item
        (`Verdicts.settled`). None: not known yet."""
        if self.dir.done(LABEL):
            labeled = {item.id: item for item in self.labeled}
            return [labeled[item.id] for item in self.shard_items(index) if item.id in labeled]
        known = self.known_candidates()
        if len(known) <= index * self.shard_size:
            return None
        return self.verdicts.settled(self.recipe, known, self.shard_size, index, complete=self.constructed())

    def is_settled(self, index: int) -> bool:
        return self.settled(index) is not None

    async def distill(self, index: int) -> None:
        """Distillation shard `index`: the teacher on the items of candidate shard `index` that are
        published, once `settled` knows them."""

        async def work() -> DistillShard:
            items = self.settled(index)
            if items is None:
                raise RuntimeError(f"distill shard {index} started before its items were known (a scheduler's bug)")
            self.context.progress.log(f"distill shard {index + 1}/{self.distill_count()}: {len(items)} items")
            return await self.recipe.distill(items)

        await self.store.make_async(distill_stage(index), work)

    # what becomes of the run
    @contextmanager
    def outcome_recorded(self, **where: Any) -> Iterator[None]:
        """Record a run that stops in the catalog, with why (`where`: its flow run's id, page, the
        stages found done at its start): every scheduler's one way to fail."""
        try:
            yield
        except BudgetExhausted as error:
            self.record(status="stopped", error=error, **where)
            raise
        except NothingSurvived:
            raise  # recorded by `publish`, with its funnel
        except Exception as error:
            self.record(status="failed", error=error, **where)
            raise

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

    def close(self, run_coroutine=asyncio.run) -> None:
        """Close the model session; `run_coroutine` runs the closing on the event loop the run's
        requests were made on (a Prefect worker's shard loop)."""
        if self.context.session is not None:
            run_coroutine(self.context.session.aclose())
            self.context.session = None

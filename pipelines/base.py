"""What a recipe is: one base class with the whole contract, and the typed records its stages return.

A run is a sequence of resumable stages (`synth.runner` drives them, in one process or as Prefect
tasks): optional rounds, in order (each sees the ones before) -> `construct` -> `attempt` on each
panel shard -> `label` (consensus over every shard) -> optional `distill` on each shard of the
labeled items -> publish. A recipe subclasses `Recipe`, names its `Config`, and implements
`construct` and `label`; the other stages are on when it says so (`rounds`, `runs_panel`,
`distills`). Each stage returns a frozen record; the runner saves it (tables as Parquet, the rest as
JSON) and loads it back typed, so no stage reads another's output by string key.

Stages that call models in bulk (rounds, panel shards, distillation shards) are coroutines: the
runner runs a stage's shards in one event loop, so they share each model's concurrency pool.
"""

import dataclasses
import typing
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, ClassVar, Generic, Self, TypeVar

from pydantic import TypeAdapter

from synth.config import FrozenConfig
from synth.filters.base import FilterChain
from synth.filters.checks import CheckScope, check_chain
from synth.llm.accounting import Ledger
from synth.llm.base import LLMBackend
from synth.llm.models import BUILTIN_MODELS, ModelSpec
from synth.llm.session import LLMSession
from synth.progress import Progress
from synth.schemas import (
    DifficultyLabel,
    FilterVerdict,
    FunnelStage,
    Item,
    Record,
    SolverAttempt,
    Trajectory,
)
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.health import healthy
from synth.store.reader import read_columns
from synth.store.tables import TABLES
from synth.store.workdir import StageOutput


@dataclass
class RunContext:
    """What a recipe receives besides its config: where data lives, how to report, and the models
    it may call."""

    settings: Settings
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))
    llm: str | None = None
    """A declared model every role uses instead of the recipe's (`--llm fake` for a dry run)."""
    models: dict[str, ModelSpec] = field(default_factory=lambda: dict(BUILTIN_MODELS))
    """The declared models (the built-ins and a flows file's `models:`), by name."""
    session: LLMSession | None = None
    dataset: str | None = None
    """The dataset the run publishes to, so filters can compare with its earlier versions."""
    ledger: Ledger = field(default_factory=Ledger)
    """Every model call of the run is counted here (and budgeted), whichever session makes it."""
    backends: dict[str, LLMBackend] = field(default_factory=dict)
    """Declared model name -> a backend that serves it instead of the declared one (tests inject a
    scripted backend here; calls still go through the run's cache, budget and ledger)."""

    def earlier_items(self, columns: list[str]) -> list[tuple]:
        """`columns` of every item in the published versions of this run's dataset."""
        if self.dataset is None:
            return []
        with Catalog.open(self.settings, read_only=True) as catalog:
            versions = healthy(
                self.settings.home.absolute(), catalog.versions(self.dataset)
            )  # a damaged one is warned about
        return [row for version in versions for row in read_columns(self.settings, version, "items", columns)]

    def earlier_questions(self) -> list[tuple[str, str, list[str]]]:
        """(item id, question, accepted answers) of every item in earlier versions of this run's
        dataset: what near-duplicate filters compare new questions with."""
        rows = self.earlier_items(["id", "question", "answer", "aliases"])
        return [(item_id, question, [answer, *aliases]) for item_id, question, answer, aliases in rows]

    def llm_session(self, roles: dict[str, str]) -> LLMSession:
        """The run's model session (one cache and ledger for the whole run), created on first use."""
        resolved = {role: self.llm or name for role, name in roles.items()}
        if self.session is None:
            self.session = LLMSession(
                self.settings,
                self.models,
                roles=resolved,
                log=self.progress.log,
                ledger=self.ledger,
                backends=self.backends,
            )
        else:
            self.session.roles.update(resolved)  # a later stage may bring roles of its own
        return self.session


class StageRecord:
    """Base of the frozen dataclasses stages return. A field named after a table of the store and
    typed `list[<its Record>]` is that table (saved as Parquet); a `dict[str, list[Record]]`
    field holds tables by name; every other field is JSON metadata, dumped and validated by its
    type. Unknown metadata (the runner's seconds, calls, worker) is ignored on load."""

    def to_output(self) -> StageOutput:
        output = StageOutput()
        for name, kind in _fields(type(self)).items():
            value = getattr(self, name)
            if kind == "table":
                output.tables[name] = list(value)
            elif kind == "tables":
                output.tables.update({table: list(records) for table, records in value.items()})
            else:
                output.meta[name] = _adapter(kind).dump_python(value, mode="json")
        return output

    @classmethod
    def from_output(cls, output: StageOutput) -> Self:
        fields = _fields(cls)
        claimed = {name for name, kind in fields.items() if kind == "table"}
        values: dict[str, Any] = {}
        for name, kind in fields.items():
            if kind == "table":
                values[name] = list(output.tables.get(name, []))
            elif kind == "tables":
                values[name] = {table: records for table, records in output.tables.items() if table not in claimed}
            elif name in output.meta:
                values[name] = _adapter(kind).validate_python(output.meta[name])
        return cls(**values)


@cache
def _fields(cls: type) -> dict[str, Any]:
    """Field name -> "table", "tables" or its type (metadata)."""
    hints = typing.get_type_hints(cls)
    kinds: dict[str, Any] = {}
    for entry in dataclasses.fields(cls):
        hint = hints[entry.name]
        if entry.name in TABLES and _is_records(hint):
            kinds[entry.name] = "table"
        elif typing.get_origin(hint) is dict and _is_records(typing.get_args(hint)[1]):
            kinds[entry.name] = "tables"
        else:
            kinds[entry.name] = hint
    return kinds


def _is_records(hint: Any) -> bool:
    if typing.get_origin(hint) is not list:
        return False
    (inner,) = typing.get_args(hint)
    return isinstance(inner, type) and issubclass(inner, Record)


@cache
def _adapter(hint: Any) -> TypeAdapter:
    return TypeAdapter(hint)


@dataclass(frozen=True)
class _Batch(StageRecord):
    """Items with what was decided about them: what a round and construction both hand on."""

    items: list[Item]
    verdicts: list[FilterVerdict] = field(default_factory=list)
    attempts: list[SolverAttempt] = field(default_factory=list)
    labels: list[DifficultyLabel] = field(default_factory=list)
    trajectories: list[Trajectory] = field(default_factory=list)
    funnel: list[FunnelStage] = field(default_factory=list)
    models: dict[str, str] = field(default_factory=dict)
    """Role -> model identity of every model the stage called."""
    statistics: dict[str, Any] = field(default_factory=dict)
    """Figures for the summary (a round's also hold the decisions the next round reads)."""


@dataclass(frozen=True)
class Round(_Batch):
    """One round of a recipe that plays rounds (self-play): what it kept and what it learned."""


@dataclass(frozen=True)
class Construction(_Batch):
    """The candidates the panel shards split, and the funnel up to here. Recipes whose panel ran
    earlier (in rounds) carry its attempts, labels and trajectories along."""

    kg_snapshot: str | None = None


@dataclass(frozen=True)
class PanelShard(StageRecord):
    """The solver panel's attempts on one shard of the candidates."""

    attempts: list[SolverAttempt]
    trajectories: list[Trajectory]
    solvers: dict[str, str]
    """Solver name -> model identity."""
    judge: str | None = None
    """The answer judge's model identity, if one rechecked answers."""


@dataclass(frozen=True)
class DistillShard(StageRecord):
    """Teacher rollouts on one shard of the labeled items, judged (rejected ones kept, with their reason)."""

    trajectories: list[Trajectory]
    teacher: str
    protocol: str
    items: int


@dataclass(frozen=True)
class RecipeResult(StageRecord):
    """What the label stage makes and publishing writes: one dataset version's tables and summary."""

    tables: dict[str, list[Record]]
    funnel: list[FunnelStage]
    models: dict[str, str] = field(default_factory=dict)
    kg_snapshot: str | None = None
    statistics: dict[str, Any] = field(default_factory=dict)
    """Recipe-specific figures for the summary (e.g. relation mix, walk survival rates)."""
    parent: str | None = None
    """The version this one was made from (NAME@VERSION), for a recipe that curates one."""


C = TypeVar("C", bound=FrozenConfig)


class Recipe(ABC, Generic[C]):
    """A recipe: its config type, its stages, and which optional stages it runs.

    Subclasses set `name`, `description` and `Config`, and implement `construct` and `label`. The
    runner calls nothing else, and only what the switches below turn on.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    Config: ClassVar[type[FrozenConfig]]

    def __init__(self, config: C, context: RunContext):
        self.config, self.context = config, context

    @classmethod
    def pin(cls, config: C, settings: Settings) -> C:
        """The config with its moving inputs made fixed (a dataset's newest version, a file's content)
        before the run is named by it, so a rerun after they changed is a new run, not the old result."""
        return config

    # rounds: a recipe that plays them returns how many; round i sees rounds 0..i-1
    def rounds(self) -> int:
        return 0

    async def play_round(self, index: int, earlier: list[Round]) -> Round:
        raise NotImplementedError(f"recipe {self.name} plays no rounds")

    @abstractmethod
    def construct(self, rounds: list[Round]) -> Construction:
        """The candidates (from the rounds, if any); cheap filters run here."""

    # the solver panel on shards of the candidates
    def runs_panel(self) -> bool:
        return False

    async def attempt(self, items: list[Item]) -> PanelShard:
        raise NotImplementedError(f"recipe {self.name} runs no panel")

    @abstractmethod
    def label(self, construction: Construction, shards: list[PanelShard]) -> RecipeResult:
        """Consensus over every shard's attempts, quotas and statistics: what will be published."""

    # teacher distillation on shards of the labeled items
    def distills(self) -> bool:
        return False

    async def distill(self, items: list[Item]) -> DistillShard:
        raise NotImplementedError(f"recipe {self.name} does not distill")

    def add_distillation(self, result: RecipeResult, shards: list[DistillShard]) -> RecipeResult:
        raise NotImplementedError(f"recipe {self.name} does not distill")

    def leak_names(self) -> Callable[[str], str]:
        """Entity id -> name for the leakage check (identity: where an item's ids are its names)."""
        return lambda entity_id: entity_id

    def check_chain(self, earlier_items: Sequence[Item] = ()) -> FilterChain:
        """The config's `checks`, built on this run's world, in list order; `earlier_items`: what
        this run kept before the batch the chain judges (self-play's earlier rounds)."""
        config, context = self.config, self.context
        scope = CheckScope(
            settings=context.settings,
            world=lambda: self.world,  # type: ignore[attr-defined]
            retriever=config.retriever,  # type: ignore[attr-defined]
            names=self.leak_names(),
            earlier_questions=context.earlier_questions,
            earlier_items=earlier_items,
            log=context.progress.log,
        )
        return check_chain(config.checks, scope)  # type: ignore[attr-defined]

    def stage_models(self, stage: str) -> list[str]:
        """The declared models stage kind `stage` ("round", "attempt" or "distill") calls, so a
        scheduler can cap the shards in flight per model."""
        return []


R = TypeVar("R", bound=Recipe)

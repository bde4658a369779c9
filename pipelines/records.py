"""The typed records a recipe's stages return: the runner saves each (tables as Parquet, the rest as
JSON) and loads it back typed, so no stage reads another's output by string key."""

import dataclasses
import typing
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Self

from pydantic import TypeAdapter

from synth.schemas import (
    DifficultyLabel,
    FilterVerdict,
    FunnelStage,
    Item,
    Record,
    SolverAttempt,
    Trajectory,
)
from synth.store.tables import TABLES
from synth.store.workdir import StageOutput


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
class CandidateSlice(StageRecord):
    """`shard_size` consecutive candidates, saved while construction goes on, so a flow's panel
    shard can start on them before construction ends."""

    items: list[Item]


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

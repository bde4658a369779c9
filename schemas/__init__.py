"""The records every stage reads and writes (pydantic v2, `extra="forbid"`, frozen).

One module per concept; import them from here: `from synth.schemas import Item, Trajectory`.
"""

from synth.schemas.audit import AuditRating, AuditRun, AuditSample, SampledItem
from synth.schemas.base import JsonDict, Record
from synth.schemas.dataset import DatasetVersion, FunnelStage, RunRecord, RunStatus, VersionStatus
from synth.schemas.evaluation import EvalAttempt, EvalRun
from synth.schemas.item import Constraint, Cue, Fact, Hop, Item, Provenance, Step
from synth.schemas.solving import (
    Condition,
    DifficultyLabel,
    DifficultyName,
    PassRate,
    SolverAttempt,
    Usage,
)
from synth.schemas.trajectory import ChatMessage, FunctionCall, ToolCall, Trajectory
from synth.schemas.verdict import FilterVerdict
from synth.schemas.world import Document, Entity, Relation, Triple

__all__ = [
    "AuditRating",
    "AuditRun",
    "AuditSample",
    "ChatMessage",
    "Condition",
    "Constraint",
    "Cue",
    "DatasetVersion",
    "DifficultyLabel",
    "DifficultyName",
    "Document",
    "Entity",
    "EvalAttempt",
    "EvalRun",
    "Fact",
    "FilterVerdict",
    "FunctionCall",
    "FunnelStage",
    "Hop",
    "Item",
    "JsonDict",
    "PassRate",
    "Provenance",
    "Record",
    "SampledItem",
    "Relation",
    "RunRecord",
    "RunStatus",
    "SolverAttempt",
    "Step",
    "ToolCall",
    "Trajectory",
    "Triple",
    "Usage",
    "VersionStatus",
]

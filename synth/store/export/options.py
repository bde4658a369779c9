"""What every exporter receives: the version to export, where to write, and the user's options."""

from dataclasses import dataclass, field
from pathlib import Path

from synth.schemas import DatasetVersion
from synth.settings import Settings


@dataclass(frozen=True)
class ExportRequest:
    settings: Settings
    version: DatasetVersion
    out: Path
    split: str = "train"
    where: str | None = None
    """SQL predicate over the exported table's columns, e.g. "difficulty in ('medium', 'hard')"."""
    data_source: str | None = None
    prompt_template: Path | None = None
    force: bool = False
    role: str = "teacher"
    """Whose trajectories the SFT formats write: teacher rollouts, or self-play proposals."""


@dataclass
class ExportResult:
    path: Path
    rows: int
    notes: list[str] = field(default_factory=list)
    """Things the user must know to train on the export (e.g. which scorer the data_source needs)."""

"""A published dataset version: its lineage, its counts and its funnel."""

from datetime import datetime
from typing import Literal

from pydantic import Field

from synth.schemas.base import JsonDict, NonBlank, Record

VersionStatus = Literal["pending", "published", "failed"]
"""pending: number reserved, shards being written (or the writer was killed); published: visible and
immutable; failed: the run stopped with an error before publishing (the number stays used)."""


class FunnelStage(Record):
    """How many items entered a stage, how many it kept, and why it dropped the rest."""

    stage: NonBlank
    input: int = Field(ge=0)
    kept: int = Field(ge=0)
    dropped: dict[str, int] = Field(default_factory=dict)
    """Drop reason -> count."""


class DatasetVersion(Record):
    """Catalog row of one version of a named dataset."""

    name: NonBlank
    version: int = Field(ge=1)
    status: VersionStatus
    created_at: datetime
    published_at: datetime | None = None
    recipe: str
    config: JsonDict = Field(default_factory=dict)
    config_hash: str
    code_version: str
    models: dict[str, str] = Field(default_factory=dict)
    """Role -> model identity, for every model the run used."""
    kg_snapshot: str | None = None
    seed: int | None = None
    parent: str | None = None
    """`name@version` this version was derived from, if any."""
    row_counts: dict[str, int] = Field(default_factory=dict)
    funnel: list[FunnelStage] = Field(default_factory=list)
    summary: JsonDict = Field(default_factory=dict)
    """Run summary: tokens, cache hits, wall time, per-stage timings."""
    path: str
    """Folder of the version's shards, relative to the data root."""
    writer: str = ""
    """`pid@host` of the process that reserved the version, to tell a dead writer from a live one."""

    @property
    def ref(self) -> str:
        return f"{self.name}@{self.version}"


RunStatus = Literal["running", "published", "failed", "stopped"]
"""stopped: a budget ran out; the run resumes where it stopped when rerun with more."""


class RunRecord(Record):
    """Catalog row of one run of a recipe (from `synth generate` or a Prefect flow): what it
    made, how long it took, and where to see it in the Prefect UI."""

    run_id: NonBlank
    dataset: NonBlank
    recipe: NonBlank
    status: RunStatus
    started_at: datetime
    finished_at: datetime | None = None
    version: int | None = None
    runner: str = "local"
    """local (`synth generate`), or the Prefect task runner the flow used."""
    flow_run_id: str | None = None
    ui_url: str | None = None
    stages: list[str] = Field(default_factory=list)
    """Stages finished, including those a resumed run found done."""
    resumed_stages: list[str] = Field(default_factory=list)
    """Stages found done by an earlier attempt of this run and skipped."""
    funnel: list[FunnelStage] = Field(default_factory=list)
    summary: JsonDict = Field(default_factory=dict)
    error: str | None = None

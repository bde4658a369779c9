"""`synth generate` as a library call."""

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.config import apply_params
from synth.llm.base import LLMBackend
from synth.progress import Progress
from synth.run.limits import RunLimits
from synth.run.local import run_locally
from synth.run.runner import DEFAULT_SHARD_SIZE, RunRequest
from synth.schemas import DatasetVersion
from synth.settings import Settings


@dataclass
class GenerateResult:
    version: DatasetVersion
    seconds: float


def generate(
    settings: Settings,
    recipe_name: str,
    params: list[str] | None = None,
    name: str | None = None,
    progress: Progress | None = None,
    llm: str | None = None,
    flows_file: Path | None = None,
    shard_size: int | None = None,
    limits: RunLimits | None = None,
    config: dict[str, Any] | None = None,
    backends: dict[str, LLMBackend] | None = None,
    staged: bool = False,
) -> GenerateResult:
    """Run recipe `recipe_name` and publish the result as `name` (default: the recipe's name). Its
    config: `config` (nested values, e.g. a flows.yaml entry's `params`) with each `key=value` of
    `params` set on top. An unfinished run of the same recipe, dataset, config and models is resumed.
    `limits`: budget and failure gate (default: those the run folder has, else the defaults).
    `backends`: declared model name -> a backend to call instead (tests inject scripted ones);
    `staged`: stage after stage instead of streaming items through them (`RunRequest.staged`)."""
    started = time.monotonic()
    request = RunRequest(
        recipe_name,
        apply_params(config or {}, list(params or [])),
        name,
        llm,
        str(flows_file) if flows_file else None,
        DEFAULT_SHARD_SIZE if shard_size is None else shard_size,
        limits.model_dump(mode="json") if limits else None,
        staged,
    )
    version = run_locally(settings, request, progress, backends=backends)
    return GenerateResult(version, time.monotonic() - started)

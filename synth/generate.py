"""`synth generate` as a library call, and what a recipe's stages receive and return."""

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.llm.accounting import Ledger
from synth.progress import Progress
from synth.schemas import DatasetVersion, FunnelStage, Record
from synth.settings import Settings

if TYPE_CHECKING:
    from synth.limits import RunLimits
    from synth.llm.session import LLMSession


@dataclass
class RunContext:
    """What a recipe's `run` receives besides its config: where data lives, how to report, and
    the models it may call."""

    settings: Settings
    progress: Progress
    llm: str | None = None
    """A declared model every role uses instead of the recipe's (`--llm fake` for a dry run)."""
    flows_file: Path | None = None
    """Where models are declared (`models:`); the built-ins are always there."""
    session: "LLMSession | None" = None
    dataset: str | None = None
    """The dataset the run publishes to, so filters can compare with its earlier versions."""
    ledger: Ledger = field(default_factory=Ledger)
    """Every model call of the run is counted here (and budgeted), whichever session makes it."""

    def earlier_items(self, columns: list[str]) -> list[tuple]:
        """`columns` of every item in the published versions of this run's dataset."""
        if self.dataset is None:
            return []
        from synth.store.catalog import Catalog
        from synth.store.health import healthy
        from synth.store.reader import read_columns

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

    def llm_session(self, roles: dict[str, str]) -> "LLMSession":
        """The run's model session (one cache and ledger for the whole run), created on first use."""
        resolved = {role: self.llm or name for role, name in roles.items()}
        if self.session is None:
            from synth.llm.models import declared_models
            from synth.llm.session import LLMSession

            self.session = LLMSession(
                self.settings,
                declared_models(self.flows_file),
                roles=resolved,
                log=self.progress.log,
                ledger=self.ledger,
            )
        else:
            self.session.roles.update(resolved)  # a later stage may bring roles of its own
        return self.session


@dataclass
class RecipeResult:
    """What a recipe's `run` returns; `generate` publishes it as one version."""

    tables: dict[str, list[Record]]
    funnel: list[FunnelStage]
    models: dict[str, str] = field(default_factory=dict)
    kg_snapshot: str | None = None
    statistics: dict[str, Any] = field(default_factory=dict)
    """Recipe-specific figures for the summary (e.g. relation mix, walk survival rates)."""


@dataclass
class GenerateResult:
    version: DatasetVersion
    seconds: float


def generate(
    settings: Settings,
    recipe_name: str,
    params: list[str],
    name: str | None = None,
    progress: Progress | None = None,
    llm: str | None = None,
    flows_file: Path | None = None,
    shard_size: int | None = None,
    limits: "RunLimits | None" = None,
) -> GenerateResult:
    """Run recipe `recipe_name` with `key=value` overrides and publish the result as `name` (default:
    the recipe). An unfinished run of the same recipe, dataset, config and models is resumed.
    `limits`: budget and failure gate (default: those the run folder has, else the defaults)."""
    from synth.runner import DEFAULT_SHARD_SIZE, RunRequest, run_locally

    started = time.monotonic()
    request = RunRequest(
        recipe_name,
        tuple(params),
        name,
        llm,
        str(flows_file) if flows_file else None,
        shard_size or DEFAULT_SHARD_SIZE,
        limits.model_dump(mode="json") if limits else None,
    )
    version = run_locally(settings, request, progress)
    return GenerateResult(version, time.monotonic() - started)

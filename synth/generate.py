"""`synth generate` as a library call: build the recipe's config, run it, publish one version."""

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from synth.config import apply_params, build_config
from synth.progress import Progress
from synth.recipes import get_recipe
from synth.schemas import DatasetVersion, FunnelStage, Record
from synth.settings import Settings
from synth.store.publish import VersionSpec, publish_version, validate_dataset_name

if TYPE_CHECKING:
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

    def earlier_items(self, columns: list[str]) -> list[tuple]:
        """`columns` of every item in the published versions of this run's dataset."""
        if self.dataset is None:
            return []
        from synth.store.catalog import Catalog
        from synth.store.reader import read_columns

        with Catalog.open(self.settings, read_only=True) as catalog:
            versions = catalog.versions(self.dataset)
        return [row for version in versions for row in read_columns(self.settings, version, "items", columns)]

    def llm_session(self, roles: dict[str, str]) -> "LLMSession":
        """The run's model session (one cache and ledger for the whole run), created on first use."""
        resolved = {role: self.llm or name for role, name in roles.items()}
        if self.session is None:
            from synth.llm.models import declared_models
            from synth.llm.session import LLMSession

            self.session = LLMSession(self.settings, declared_models(self.flows_file), roles=resolved, log=self.progress.log)
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
) -> GenerateResult:
    """Run recipe `recipe_name` with `key=value` overrides and publish the result as `name` (default: the recipe)."""
    recipe = get_recipe(recipe_name)
    dataset = validate_dataset_name(name or recipe_name)
    module = recipe.load()
    config = build_config(module.Config, apply_params({}, params), f"recipe {recipe_name}")
    started = time.monotonic()
    context = RunContext(settings, progress or Progress(enabled=False), llm=llm, flows_file=flows_file, dataset=dataset)
    try:
        result: RecipeResult = module.run(config, context)
    finally:
        if context.session is not None:
            asyncio.run(context.session.aclose())
    seconds = time.monotonic() - started
    llm_summary = {"llm": context.session.ledger.summary()} if context.session is not None else {}
    spec = VersionSpec(
        name=dataset,
        recipe=recipe_name,
        config=config.model_dump(mode="json"),
        models=result.models,
        kg_snapshot=result.kg_snapshot,
        seed=getattr(config, "seed", None),
        funnel=result.funnel,
        summary={"seconds": round(seconds, 2), **result.statistics, **llm_summary},
    )
    version = publish_version(settings, spec, result.tables)
    return GenerateResult(version, time.monotonic() - started)

"""Recipe `curate`: synth's filters, solver panel and labels on data that already exists.

The source is a published version (`NAME` or `NAME@VERSION`) or any file `synth datasets import`
reads. Construction runs the chosen cheap checks (format, answer in the question, exact and near
duplicates, also against other datasets, contamination against benchmark files, the one-search
shortcut) and rejects trajectories by their outcome; the solver panel and consensus labels run in
shards when `panel.enabled`. The new version names its source as its parent; every verdict is kept,
and a dropped item's verdict carries its question and answer, so what the curation removed can be
read back (`synth datasets show`, `synth sql "select * from verdicts where not kept"`).
"""

from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from pydantic import Field, model_validator

from synth.contract.matching import match_answer
from synth.errors import ConfigError, NotFoundError
from synth.filters.checks import Checks, move_old_check_keys
from synth.filters.consensus import ConsensusConfig
from synth.filters.contamination import ContaminationConfig
from synth.filters.dedup import DedupConfig
from synth.filters.format import FormatConfig
from synth.filters.leakage import LeakageConfig
from synth.filters.near_dup import NearDupConfig
from synth.hashing import file_hash
from synth.pipelines.base import Construction, PanelShard, Recipe, RecipeResult, Round
from synth.pipelines.recipe_config import RecipeConfig
from synth.pipelines.recipes import RECIPES
from synth.schemas import DatasetVersion, FilterVerdict, FunnelStage, Item, Trajectory
from synth.search.world_settings import WorldSettings, move_world_keys
from synth.settings import Settings
from synth.solving.panel import PanelConfig, SolverSpec
from synth.store.catalog import Catalog
from synth.store.imports import FORMATS, read_source
from synth.store.imports.fields import ImportFields
from synth.store.reader import iter_records


def _search_solvers() -> list[SolverSpec]:
    # Imported items seldom carry evidence documents of this world, so gold_evidence shows nothing.
    return [
        SolverSpec(name="embedded", model="embedded", conditions=["closed_book", "search"], k=2),
        SolverSpec(name="bm25_reader", baseline="bm25_reader", conditions=["search"], k=1),
    ]


class CuratePanelConfig(PanelConfig):
    """The panel, off unless asked for: most curation is the cheap checks."""

    enabled: bool = Field(default=False, description="Run the solver panel and label difficulty (model calls).")
    solvers: list[SolverSpec] = Field(default_factory=_search_solvers, description="At least two distinct solvers.")


class CurateConsensus(ConsensusConfig):
    drop_unanswerable: bool = Field(
        default=False, description="Drop items no solver answers from gold evidence (curated items seldom have any)."
    )
    drop_ambiguous: bool = Field(
        default=False, description="No graph to check a rival answer against: curated items keep theirs."
    )


def _curate_checks() -> list:
    # Factoid sets hold 3-word questions; a new curation is the whole set again, so near-duplicates
    # are looked for in the source and the `against` datasets, not in earlier versions.
    return [
        FormatConfig(min_question_words=3),
        LeakageConfig(),
        DedupConfig(),
        NearDupConfig(against_earlier_versions=False),
        ContaminationConfig(),
    ]


def _outcome_listed(values):
    """Before `outcome` was a switch, it was a name in the `checks` list: such a list still says it."""
    if not isinstance(values, dict) or not isinstance(values.get("checks"), list):
        return values
    listed = values["checks"]
    named = [
        entry for entry in listed if entry == "outcome" or (isinstance(entry, dict) and entry.get("kind") == "outcome")
    ]
    return {**values, "checks": [entry for entry in listed if entry not in named], "outcome": bool(named)}


RENAMED_CHECK_KEYS = {"against": ("near_dup", "against")}
"""Keys of before `checks`: old key -> (check kind, its key now)."""


class Config(RecipeConfig):
    source: str | None = Field(
        default=None, description="What to curate: a published version (NAME or NAME@VERSION) or a file to import."
    )
    file_format: str = Field(
        default="sft",
        description=f"How a source file is read: one of {', '.join(FORMATS)} (see synth datasets import).",
    )
    fields: ImportFields = Field(
        default=ImportFields(), description="Where a source file's rows keep question, answers and outcome."
    )
    source_digest: str | None = Field(
        default=None,
        description="Content hash of a source file, set when the run starts: an edited file is a new run.",
    )
    strict: bool = Field(
        default=False,
        description="Refuse a source file's row whose text looks like tool use in no dialect synth reads.",
    )
    checks: Checks = Field(
        default_factory=_curate_checks,
        description="The checks to run, in this order (synth.filters.CHECK_KINDS: contamination needs "
        "checks.contamination.benchmarks; shortcut searches the world; near_dup.against names other datasets).",
    )
    outcome: bool = Field(
        default=True,
        description="Reject trajectories whose outcome failed (a recorded failure or a final answer that does not "
        "match): DPO negatives, never SFT rows.",
    )
    world: WorldSettings = Field(
        default_factory=WorldSettings,
        description="What the panel and the shortcut check search: a graph's corpus or a Search-R1 corpus file "
        "(world.corpus), with which retriever and k, under which agent contract.",
    )
    panel: CuratePanelConfig = CuratePanelConfig()
    consensus: CurateConsensus = CurateConsensus()

    @model_validator(mode="before")
    @classmethod
    def _old_check_keys(cls, values):
        return move_old_check_keys(move_world_keys(_outcome_listed(values)), RENAMED_CHECK_KEYS)


class CurateRecipe(Recipe[Config]):
    """Construct (load the source, the cheap checks, outcome rejection), panel shards and labels when
    `panel.enabled`, publish with the source as parent."""

    name = "curate"
    description = RECIPES["curate"].description  # one wording: `synth recipes` lists it without importing
    Config = Config

    @classmethod
    def pin(cls, config: Config, settings: Settings) -> Config:
        """A dataset name becomes its newest version (NAME@V); a file gets its content hash."""
        if config.source is None:
            return config
        path = Path(config.source).expanduser()
        if path.is_file():
            return config.model_copy(update={"source_digest": file_hash(path)})
        if "@" not in config.source:
            with Catalog.open(settings, read_only=True) as catalog:
                try:
                    return config.model_copy(update={"source": catalog.resolve(config.source).ref})
                except NotFoundError:
                    return config  # said when the source is read, with what to give instead
        return config

    @cached_property
    def source(self) -> "_Source":
        if self.config.source is None:
            raise ConfigError(
                "curate needs a source: --param source=NAME[@VERSION] (a published version) or source=FILE "
                "(with file_format); or run `synth curate SOURCE`"
            )
        return _Source.open(self.context.settings, self.config)

    def construct(self, rounds: list[Round]) -> Construction:
        config, source = self.config, self.source
        self.context.progress.log(f"curating {source.describe}: {len(source.items)} items ...")
        chain = self.check_chain()
        kept = chain.run(source.items)
        dropped = {item.id: item for item in source.items}
        verdicts = [_with_text(verdict, dropped) for verdict in chain.verdicts]
        kept_ids = {item.id for item in kept}
        trajectories = [t for t in source.trajectories if t.item_id in kept_ids]
        statistics: dict = {"source": source.describe, "source_items": len(source.items), **source.notes}
        if config.outcome:
            trajectories, rejected = _by_outcome(trajectories, {item.id: item for item in kept}, config)
            statistics["trajectories_rejected"] = dict(sorted(rejected.items()))
        statistics["trajectories"] = len(trajectories)
        funnel = [FunnelStage(stage="source", input=len(source.items), kept=len(source.items))]
        funnel += list(chain.stages.values())
        carried = {} if config.panel.enabled else source.labeled(kept_ids)
        return Construction(
            items=kept,
            verdicts=verdicts,
            trajectories=trajectories,
            funnel=funnel,
            statistics=statistics,
            models=source.models,
            kg_snapshot=source.kg_snapshot,
            **carried,
        )

    def labels_per_item(self) -> bool:
        return True  # consensus alone decides (no quota)

    def label(self, construction: Construction, shards: list[PanelShard]) -> RecipeResult:
        items, verdicts, funnel = construction.items, list(construction.verdicts), list(construction.funnel)
        statistics, models = dict(construction.statistics), dict(construction.models)
        tables = {
            "items": items,
            "verdicts": verdicts,
            "trajectories": construction.trajectories,
            "attempts": construction.attempts,
            "labels": construction.labels,
        }
        if shards:
            panel = self.panel_labels(items, shards)
            candidates = {item.id: item for item in items}
            verdicts += [_with_text(verdict, candidates) for verdict in panel.verdicts]
            funnel += panel.funnel
            tables.update(
                panel.tables,
                items=panel.items,
                verdicts=verdicts,
                trajectories=construction.trajectories + panel.tables["trajectories"],
            )
            models.update(panel.models)
            statistics["difficulty"] = dict(Counter(item.difficulty for item in panel.items))
        statistics["kept"] = len(tables["items"])
        return RecipeResult(
            tables=tables,
            funnel=funnel,
            models=models,
            kg_snapshot=construction.kg_snapshot,
            statistics=statistics,
            parent=self.source.parent,
        )


@dataclass
class _Source:
    """The items and trajectories to curate, from a published version (`version`) or a file."""

    describe: str
    items: list[Item]
    trajectories: list[Trajectory]
    settings: Settings
    version: DatasetVersion | None = None
    notes: dict = field(default_factory=dict)

    @classmethod
    def open(cls, settings: Settings, config: Config) -> "_Source":
        source = str(config.source)  # set: `CurateRecipe.source` refuses a config without one
        path = Path(source).expanduser()
        if path.is_file():
            if config.source_digest is not None and file_hash(path) != config.source_digest:
                raise ConfigError(
                    f"curate source {path} changed since this run started; run the command again for a new run"
                )
            built, notes = read_source(path, config.file_format, config.fields, config.strict)
            notes = {"source_file": str(path.resolve()), "source_format": config.file_format, **notes}
            return cls(f"file {path.name}", built.items, built.trajectories, settings, notes=notes)
        try:
            with Catalog.open(settings, read_only=True) as catalog:
                version = catalog.resolve(source)
        except NotFoundError as error:
            raise ConfigError(
                f"curate source {config.source!r} is neither a file nor a published version ({error})"
            ) from None
        items = list(iter_records(settings, version, "items"))
        trajectories = list(iter_records(settings, version, "trajectories"))
        return cls(version.ref, items, trajectories, settings, version=version)

    @property
    def parent(self) -> str | None:
        """The version curated (a file has none: its path is in the summary)."""
        return self.version.ref if self.version is not None else None

    @property
    def models(self) -> dict[str, str]:
        return dict(self.version.models) if self.version is not None else {}

    @property
    def kg_snapshot(self) -> str | None:
        return self.version.kg_snapshot if self.version is not None else None

    def labeled(self, kept: set[str]) -> dict:
        """The parent's attempts and labels of the kept items (none for a file)."""
        if self.version is None:
            return {}
        return {
            table: [record for record in iter_records(self.settings, self.version, table) if record.item_id in kept]
            for table in ("attempts", "labels")
        }


def _with_text(verdict: FilterVerdict, items: dict[str, Item]) -> FilterVerdict:
    """A dropped item's verdict carries the item's question and answer: the curation's record of it."""
    if verdict.kept or verdict.item_id not in items:
        return verdict
    item = items[verdict.item_id]
    return verdict.model_copy(update={"details": {**verdict.details, "question": item.question, "answer": item.answer}})


def _by_outcome(trajectories: list[Trajectory], items: dict[str, Item], config: Config):
    """Trajectories whose outcome failed become rejected ones (DPO negatives, never SFT rows): a
    recorded failure (`correct` false) or a final answer that does not match the item's."""
    judged, rejected = [], Counter()
    for trajectory in trajectories:
        item = items[trajectory.item_id]
        reason = None
        if trajectory.correct is False:
            reason = trajectory.reject_reason or "incorrect"
        elif trajectory.final_answer is None:
            reason = "no_answer"
        elif match_answer(trajectory.final_answer, item.answers, config.panel.f1_threshold)[0] == "none":
            reason = "incorrect"
        if reason is not None and trajectory.selected:
            rejected[reason] += 1
            trajectory = trajectory.model_copy(update={"selected": False, "reject_reason": reason, "correct": False})
        judged.append(trajectory)
    return judged, rejected

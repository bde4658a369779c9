"""What a recipe is: one base class with the whole contract and the parts every recipe shares.

A run is a sequence of resumable stages (`synth.run.runner` drives them, in one process or as Prefect
tasks, from one plan: `synth.run.plan.PLAN`): optional rounds, in order (each sees the ones before)
-> `construct` -> `attempt` on each panel shard -> `label` (consensus over every shard) -> optional
`distill` on each shard of the labeled items -> publish. A recipe subclasses `Recipe`, names its
`Config`, and writes `construct` and `label` (and `play_round` if it plays rounds); the base builds
the rest from the config's standard sections: the checks (`checks`), the solver panel (`panel`),
the teacher (`distill`), the models each stage calls, and the on/off switches. Each stage returns a
frozen record (`synth.pipelines.records`).

Panel and distillation shards are coroutines: the runner runs a stage's shards in one event loop,
so they share each model's concurrency pool. A round is one synchronous stage (it runs its own
event loops: the next round needs all of its results).

A streaming run (`synth.run.streaming`) calls `attempt` and `distill` one item at a time, so they must
treat items independently (they do whatever the shard); a recipe that can hand out candidates
while it makes them says so (`streams_construction`), and one whose `label` is the base's consensus
and quota says so too (`labels_per_item`), so each item's distillation starts with its own verdict.
"""

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Generic, TypeVar

from synth.filters.base import FilterChain
from synth.filters.checks import CheckScope, check_chain
from synth.generators.guidance import Guidance
from synth.pipelines.context import RunContext
from synth.pipelines.distilling import add_distillation, distill_items
from synth.pipelines.labeling import Calibration, Labeled, attempt_items, build_panel, judge_items, judge_one
from synth.pipelines.recipe_config import RecipeConfig
from synth.pipelines.records import (
    Construction,
    DistillShard,
    PanelShard,
    RecipeResult,
    Round,
    StageRecord,
)
from synth.schemas import Document, FilterVerdict, FunnelStage, Item, SolverAttempt
from synth.search.tools import SearchTools
from synth.search.world import World
from synth.settings import Settings

__all__ = [
    "Construction",
    "DistillShard",
    "PanelShard",
    "Recipe",
    "RecipeResult",
    "Round",
    "RunContext",
    "StageRecord",
]


C = TypeVar("C", bound=RecipeConfig)


@dataclass(frozen=True)
class Quota:
    """The items a recipe publishes out of its survivors, and the record of the rest."""

    chosen: list[Item]
    verdicts: list[FilterVerdict]
    """`over_quota` for each item left out."""
    stage: FunnelStage


@dataclass(frozen=True)
class PanelLabels:
    """What consensus over the panel's attempts, and the quota where a recipe has one, made of the
    candidates: the one merge of the panel into a recipe's published tables."""

    labeled: Labeled
    items: list[Item]
    """Published: consensus's kept items (difficulty set), cut to the quota."""
    verdicts: list[FilterVerdict]
    """Consensus's drops, then the quota's."""
    funnel: list[FunnelStage]
    tables: dict[str, list]
    """`attempts`, `trajectories` and the `labels` of the published items."""
    models: dict[str, str]
    """`solver:NAME` -> model identity, for the version's models."""


class Recipe(ABC, Generic[C]):
    """A recipe: its config type, its stages, and which optional stages it runs.

    Subclasses set `name`, `description` and `Config` (a `RecipeConfig`), and implement `construct`
    and `label`. The config's standard sections give the run its world (`world`) and switch the
    shared stages on: `panel.enabled` the panel shards, `distill.enabled` the teacher.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    Config: ClassVar[type[RecipeConfig]]

    def __init__(self, config: C, context: RunContext):
        self.config, self.context = config, context

    @classmethod
    def pin(cls, config: C, settings: Settings) -> C:
        """The config with its moving inputs made fixed (a dataset's newest version, a file's content)
        before the run is named by it, so a rerun after they changed is a new run, not the old result."""
        return config

    @cached_property
    def world(self) -> World:
        """The graph or corpus of the config's `world` section, and the search tools every agent of the run uses."""
        return self.config.world.open(self.context.settings, self.context.progress.log)

    def tools(self, retriever: str | None, k: int | None) -> SearchTools:
        """The search tools of an agent configured with `retriever` and top-k `k` (None: the world's)."""
        world = self.config.world
        return self.world.tools(retriever or world.retriever, k or world.retrieval_k)

    # rounds: a recipe that plays them returns how many; round i sees rounds 0..i-1
    def rounds(self) -> int:
        return 0

    async def play_round(self, index: int, earlier: list[Round]) -> Round:
        """Round `index` as a coroutine: its model work (proposer, verifier, panel) shares the run's
        event loop, so a streaming run distills earlier rounds' items meanwhile."""
        raise NotImplementedError(f"recipe {self.name} plays no rounds")

    def streams_rounds(self) -> bool:
        """Whether construction can hand out each round's candidates once that round is done
        (`round_candidates`): a streaming run then plays the rounds in its own event loop and each
        item goes on to distillation while later rounds are played."""
        return False

    def round_candidates(self, finished: Round, emitted: int) -> list[Item]:
        """The candidates of the round just `finished` that construction will publish, in its
        order, given that `emitted` came from the rounds before (see `streams_rounds`)."""
        raise NotImplementedError(f"recipe {self.name} does not stream its rounds")

    @abstractmethod
    def construct(self, rounds: list[Round]) -> Construction:
        """The candidates (from the rounds, if any); the checks run here (`check_chain`)."""

    def streams_construction(self) -> bool:
        """Whether `construct_stream` hands out candidates while it makes them (a streaming run
        then starts each one's panel at once); otherwise construction runs first, as its own stage."""
        return False

    async def construct_stream(self, rounds: list[Round], emit: Callable[[Item], None]) -> Construction:
        """`construct` on the run's event loop, calling `emit` with each candidate as soon as it is
        final, in the order of the returned `Construction.items`."""
        raise NotImplementedError(f"recipe {self.name} does not stream its construction")

    # the checks
    def leak_names(self) -> Callable[[str], str]:
        """Entity id -> name for the leakage check (identity: where an item's ids are its names)."""
        return lambda entity_id: entity_id

    def check_chain(self, earlier_items: Sequence[Item] = ()) -> FilterChain:
        """The config's `checks`, built on this run's world, in list order; `earlier_items`: what
        this run kept before the batch the chain judges (self-play's earlier rounds)."""
        config, context = self.config, self.context
        scope = CheckScope(
            settings=context.settings,
            world=lambda: self.world,
            retriever=config.world.retriever,
            names=self.leak_names(),
            earlier_questions=context.earlier_questions,
            earlier_items=earlier_items,
            log=context.progress.log,
        )
        return check_chain(config.checks, scope)

    # the solver panel on shards of the candidates
    def runs_panel(self) -> bool:
        return self.config.panel.enabled

    def evidence(self, item: Item) -> list[Document]:
        """What the panel's gold_evidence condition shows: the item's evidence documents."""
        panel = self.config.panel
        return self.tools(panel.retriever, panel.retrieval_k).open_all(item.evidence_doc_ids)

    async def attempt(
        self, items: list[Item], on_gold: Callable[[list[SolverAttempt]], None] | None = None
    ) -> PanelShard:
        """The panel's attempts on one shard of the candidates, each item on its own (a streaming run
        passes them one at a time); `on_gold` receives the gold-evidence attempts as soon as they
        are in."""
        config = self.config.panel
        panel, solvers = build_panel(
            config, self.context, self.tools(config.retriever, config.retrieval_k), self.evidence
        )
        attempts, trajectories = await attempt_items(items, panel, self.context, on_gold)
        return PanelShard(attempts, trajectories, solvers, judge=panel.judge.model if panel.judge else None)

    def consensus(
        self, items: list[Item], shards: list[PanelShard], supports: Callable[[Item, str], bool] | None = None
    ) -> Labeled:
        """The `consensus` section's rules over every panel shard's attempts: verdicts and labels.
        `supports(item, answer)`: whether another answer also fits (a graph can tell; the ambiguity rule)."""
        return judge_items(
            items,
            [attempt for shard in shards for attempt in shard.attempts],
            [trajectory for shard in shards for trajectory in shard.trajectories],
            {name: model for shard in shards for name, model in shard.solvers.items()},
            self.config.consensus,
            judge=shards[0].judge if shards else None,
            supports=supports,
        )

    def panel_labels(self, items: list[Item], shards: list[PanelShard], n: int | None = None) -> PanelLabels:
        """Consensus over every shard's attempts on `items` (with `consensus_supports`), then, given
        `n`, the quota: the panel's part of what `label` publishes."""
        labeled = self.consensus(items, shards, supports=self.consensus_supports())
        chosen, verdicts, funnel = labeled.items, list(labeled.verdicts), [labeled.stage]
        if n is not None:
            quota = self.quota(chosen, n)
            chosen, verdicts, funnel = quota.chosen, verdicts + quota.verdicts, funnel + [quota.stage]
        kept = {item.id for item in chosen}
        return PanelLabels(
            labeled=labeled,
            items=chosen,
            verdicts=verdicts,
            funnel=funnel,
            tables={
                "attempts": labeled.attempts,
                "trajectories": labeled.trajectories,
                "labels": [label for label in labeled.labels if label.item_id in kept],
            },
            models={f"solver:{name}": model for name, model in labeled.models.items()},
        )

    def labels_per_item(self) -> bool:
        """Whether `label` publishes exactly the candidates `decide` keeps that `surely_chosen`
        allows (true of the base's consensus and quota, which multihop and curate use): a streaming
        run then distills each item as soon as its own verdict is in. Otherwise it waits for the
        label stage, after every panel shard (a recipe with a label of its own says nothing here)."""
        return False

    def consensus_supports(self) -> Callable[[Item, str], bool] | None:
        """`supports(item, answer)` for the ambiguity rule (None: nothing can tell)."""
        return None

    def decide(self, item: Item, attempts: list[SolverAttempt], calibration: "Calibration") -> Item | None:
        """One item's consensus verdict as `label` will give it, from its own panel attempts and the
        calibration items': the item with its difficulty, or None when consensus drops it."""
        return judge_one(
            item,
            attempts,
            calibration.attempts,
            calibration.ids,
            calibration.solvers,
            self.config.consensus,
            judge=calibration.judge,
            supports=self.consensus_supports(),
        )

    def surely_chosen(self, candidates: list[Item], dropped: set[str], complete: bool) -> set[str]:
        """Ids of the candidates `label` publishes whatever the undecided ones turn out to be, given
        those consensus `dropped` so far (`complete`: construction made every candidate). A recipe
        whose `label` applies a quota says which survive it; by default every candidate not dropped."""
        return {item.id for item in candidates if item.id not in dropped}

    def select(self, items: list[Item], n: int) -> tuple[list[Item], list[Item]]:
        """The selection hook of `quota`: (chosen, surplus); by default the first `n`."""
        return items[:n], items[n:]

    def quota(self, items: list[Item], n: int) -> Quota:
        """Up to `n` of `items`, chosen by `select`; the rest dropped as over_quota."""
        chosen, surplus = self.select(items, n)
        return Quota(
            chosen,
            [FilterVerdict(item_id=item.id, filter="quota", kept=False, reason="over_quota") for item in surplus],
            FunnelStage(
                stage="quota",
                input=len(items),
                kept=len(chosen),
                dropped={"over_quota": len(surplus)} if surplus else {},
            ),
        )

    @abstractmethod
    def label(self, construction: Construction, shards: list[PanelShard]) -> RecipeResult:
        """Consensus over every shard's attempts, quotas and statistics: what will be published."""

    # teacher distillation on shards of the labeled items
    def distills(self) -> bool:
        return self.config.distill.enabled

    def guidance(self, item: Item) -> Guidance | None:
        """The hint a guided teacher sees for `item` (None: this recipe has none to give)."""
        return None

    async def distill(self, items: list[Item]) -> DistillShard:
        """Teacher rollouts on one shard of the labeled items, judged (`distill` section)."""
        config = self.config.distill
        tools = self.tools(config.retriever, config.retrieval_k)
        return await distill_items(
            items,
            config,
            self.context,
            tools,
            guidance=self.guidance,
            graph=lambda: self.world.graph,
            names=lambda: self.world.names,
        )

    def add_distillation(self, result: RecipeResult, shards: list[DistillShard]) -> RecipeResult:
        return add_distillation(result, shards, self.config.distill)

    # which models each stage calls
    def stage_models(self, stage: str) -> list[str]:
        """The declared models stage kind `stage` ("round", "attempt" or "distill") calls, so a
        scheduler can cap the shards in flight per model."""
        if stage == "distill":
            distill = self.config.distill
            return [distill.teacher_model] if distill.teacher == "model" else []
        if stage == "attempt":  # the configured panel's models, where it is the panel that runs
            return self.panel_models() if self.config.panel.enabled else []
        return self.round_models()

    def panel_models(self) -> list[str]:
        panel = self.config.panel
        return [solver.model for solver in panel.solvers if solver.model] + (
            [panel.judge_model] if panel.judge_model else []
        )

    def round_models(self) -> list[str]:
        """The models a round calls (a recipe that plays rounds says)."""
        return []


R = TypeVar("R", bound=Recipe)

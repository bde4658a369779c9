"""The stage every recipe shares after its cheap filters: solver panel -> consensus -> difficulty labels.

Builds the panel from the recipe's `panel` config (models through the run's LLM session, so calls
are cached, budgeted and counted; the bm25 reader from the world's tools), runs it, judges each
item by the consensus rules, and returns what to publish: labeled items, every attempt and
trajectory, the labels, and the verdicts with their funnel stage.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from synth.filters.base import FilterChain
from synth.filters.consensus import ConsensusConfig, ConsensusFilter
from synth.pipelines.context import RunContext
from synth.schemas import DifficultyLabel, Document, FilterVerdict, FunnelStage, Item, SolverAttempt, Trajectory
from synth.search.tools import SearchTools
from synth.solving.answer_judge import AnswerJudge
from synth.solving.panel import Panel, PanelConfig
from synth.solving.solvers import ModelSolver, RetrievalReader


@dataclass
class Labeled:
    items: list[Item]
    """Kept items, with their difficulty set."""
    attempts: list[SolverAttempt]
    trajectories: list[Trajectory]
    labels: list[DifficultyLabel]
    verdicts: list[FilterVerdict]
    stage: FunnelStage
    models: dict[str, str]
    """Solver name -> model identity."""
    skipped_rules: dict[str, str]
    """Consensus rules not applied to this batch, and why."""
    label_reach: dict = field(default_factory=dict)
    """Which labels the panel could give (`ConsensusFilter.label_reach`)."""


def build_panel(
    config: PanelConfig, context: RunContext, tools: SearchTools, evidence: Callable[[Item], list[Document]]
) -> tuple[Panel, dict[str, str]]:
    members = []
    for spec in config.solvers:
        if spec.baseline == "bm25_reader":
            solver = RetrievalReader(spec.name, tools)
        else:
            client = context.llm_session({f"solver_{spec.name}": str(spec.model)}).client(f"solver_{spec.name}")
            solver = ModelSolver(
                spec.name,
                client,
                tools,
                evidence,
                tuple(spec.conditions),
                config.agent,
                answer_tokens=config.answer_tokens,
            )
        members.append((solver, spec.k))
    judge = None
    if config.judge_model is not None:
        judge = AnswerJudge(context.llm_session({"judge": config.judge_model}).client("judge"))
    return Panel(members, tools, config.f1_threshold, judge), {solver.name: solver.model for solver, _ in members}


async def attempt_items(
    items: list[Item],
    panel: Panel,
    context: RunContext,
    on_gold: Callable[[list[SolverAttempt]], None] | None = None,
) -> tuple[list[SolverAttempt], list[Trajectory]]:
    """Every solver's attempts on `items` (one shard of a run): the part that costs model calls.
    `on_gold`: receives the gold-evidence attempts first (`Panel.attempt`)."""
    return await panel.attempt(items, progress=context.progress.log, on_gold=on_gold)


@dataclass(frozen=True)
class Calibration:
    """What one item's consensus verdict needs beyond its own attempts: the calibration items'
    attempts (the reader check) and the panel's identity."""

    ids: set[str]
    attempts: list[SolverAttempt]
    solvers: dict[str, str]
    judge: str | None


def judge_one(
    item: Item,
    attempts: list[SolverAttempt],
    calibration_attempts: list[SolverAttempt],
    calibration: set[str],
    models: dict[str, str],
    consensus: ConsensusConfig,
    judge: str | None = None,
    supports: Callable[[Item, str], bool] | None = None,
) -> Item | None:
    """`judge_items` for one item: the same verdict, given the calibration items' attempts."""
    others = [attempt for attempt in calibration_attempts if attempt.item_id != item.id]
    consensus_filter = ConsensusFilter(
        consensus, [*others, *attempts], models, supports, judge=judge, calibration=calibration
    )
    if consensus_filter.check(item) is not True:
        return None
    return item.model_copy(update={"difficulty": consensus_filter.labels[item.id].label})


def calibration_ids(candidates: Sequence[Item], consensus: ConsensusConfig) -> set[str]:
    """The candidates the reader check (`min_gold_solve_rate`) is measured on: the first ones."""
    return {item.id for item in candidates[: consensus.gold_calibration_items]}


def judge_items(
    items: list[Item],
    attempts: list[SolverAttempt],
    trajectories: list[Trajectory],
    models: dict[str, str],
    consensus: ConsensusConfig,
    judge: str | None = None,
    supports: Callable[[Item, str], bool] | None = None,
) -> Labeled:
    """Consensus over the whole batch's attempts (every shard's): verdicts and difficulty labels.
    `items` in candidate order (the first `gold_calibration_items` calibrate the reader check);
    `judge`: the answer judge's model identity, if one rechecked answers."""
    consensus_filter = ConsensusFilter(
        consensus, attempts, models, supports, judge=judge, calibration=calibration_ids(items, consensus)
    )
    chain = FilterChain([consensus_filter])
    kept = chain.run(items)
    labels = [consensus_filter.labels[item.id] for item in kept]
    labeled = [item.model_copy(update={"difficulty": consensus_filter.labels[item.id].label}) for item in kept]
    return Labeled(
        labeled,
        attempts,
        trajectories,
        labels,
        chain.verdicts,
        chain.stages["consensus"],
        models,
        consensus_filter.skipped,
        consensus_filter.label_reach(),
    )

"""Recipe `selfplay`: a proposer agent searches the corpus and writes questions for target answers;
gates and RAG verification keep the grounded ones; a solver panel tries them; rounds move the
requested search depth toward the difficulty band (Search Self-Play, as a data generator).

One round is one resumable stage (`round-NNNNN`): propose -> format, leakage, proposer searches,
dedup, near-dup, contamination -> RAG verification -> solver panel -> consensus labels -> band.
The next round's depth depends on this round's solver results, so rounds run in order; within a
round every model call is batched and cached, so a run killed mid-round replays its finished calls.
`construct` merges the rounds (quota `n`); labels and distillation are shared with `multihop`.
"""

import math
from collections import Counter
from dataclasses import dataclass, field
from functools import cached_property

from pydantic import Field, model_validator

from synth.errors import ConfigError
from synth.filters.band import BandConfig, BandFilter
from synth.filters.base import FilterChain, add_stages
from synth.filters.checks import Checks, move_old_check_keys
from synth.filters.consensus import ConsensusConfig, search_success
from synth.filters.contamination import ContaminationConfig
from synth.filters.dedup import DedupConfig
from synth.filters.format import FormatConfig
from synth.filters.leakage import LeakageConfig
from synth.filters.near_dup import NearDupConfig
from synth.filters.proposer_searches import ProposerSearchesConfig
from synth.filters.rag_verify import RAGConfig, RAGVerifier
from synth.generators.curriculum import CurriculumConfig, next_searches
from synth.generators.selfplay import Proposal, Proposer, ProposerConfig, TargetConfig, eligible_targets, sample_targets
from synth.llm.types import is_model_failure
from synth.pipelines.base import (
    Construction,
    PanelShard,
    Recipe,
    RecipeResult,
    Round,
)
from synth.pipelines.recipe_config import RecipeConfig
from synth.pipelines.recipes import RECIPES
from synth.schemas import DifficultyLabel, FilterVerdict, FunnelStage, Item, SolverAttempt, Trajectory
from synth.search.world_settings import WorldSettings, move_world_keys
from synth.solving.panel import PanelConfig, SolverSpec


def _selfplay_solvers() -> list[SolverSpec]:
    # The embedded model twice per question plus the model-free reader: small enough for 2 CPU
    # cores, and a pooled success rate with more than two values. Real runs: a real model, k >= 4.
    return [
        SolverSpec(name="embedded", model="embedded", conditions=["search"], k=2),
        SolverSpec(name="bm25_reader", baseline="bm25_reader", conditions=["search"], k=1),
    ]


class SolverPanelConfig(PanelConfig):
    """The panel, with self-play's defaults: search attempts only (RAG verification already checked
    answerability from the evidence, and closed-book is rarely the question here)."""

    solvers: list[SolverSpec] = Field(
        default_factory=_selfplay_solvers, description="Solvers that try each verified question with search."
    )


class SelfplayConsensus(ConsensusConfig):
    drop_unanswerable: bool = Field(
        default=False, description="RAG verification already dropped questions their evidence does not answer."
    )


RENAMED_CHECK_KEYS = {"min_distinct_searches": ("proposer_searches", "min_distinct")}
"""Keys of before `checks`: old key -> (check kind, its key now)."""


class Config(RecipeConfig):
    n: int = Field(default=20, ge=1, description="Items to publish (fewer if fewer survive every gate).")
    seed: int = Field(default=0, description="Same seed and config reproduce the same targets and requests.")
    rounds: int = Field(
        default=3,
        ge=1,
        le=100,
        description="Self-play rounds; each adapts the requested searches to the last one's solver success.",
    )
    per_round: int | None = Field(
        default=None, ge=1, description="Targets proposed per round; default ceil(n * oversample / rounds)."
    )
    oversample: float = Field(
        default=3.0, ge=1.0, le=50.0, description="Proposals per published item: gates and the band drop many."
    )
    world: WorldSettings = Field(
        default_factory=WorldSettings,
        description="What proposer and solvers search: a Search-R1 corpus file (world.corpus) or a graph's corpus, "
        "with which retriever and k, under which agent contract.",
    )
    targets: TargetConfig = TargetConfig()
    proposer: ProposerConfig = ProposerConfig()
    curriculum: CurriculumConfig = CurriculumConfig()
    checks: Checks = Field(
        default_factory=lambda: [
            FormatConfig(),
            LeakageConfig(),
            ProposerSearchesConfig(),
            DedupConfig(),
            NearDupConfig(),
            ContaminationConfig(),
        ],
        description="The gates every proposed question passes before RAG verification, in order; dedup and "
        "near_dup also look at earlier rounds (a mapping changes entries by kind).",
    )
    rag: RAGConfig = RAGConfig()
    panel: SolverPanelConfig = SolverPanelConfig()
    consensus: SelfplayConsensus = SelfplayConsensus()
    band: BandConfig = BandConfig()

    @model_validator(mode="before")
    @classmethod
    def _old_keys(cls, values):
        return move_old_check_keys(move_world_keys(values), RENAMED_CHECK_KEYS)

    @model_validator(mode="after")
    def _panel_on(self) -> "Config":
        if not self.panel.enabled:
            raise ValueError(
                "selfplay needs its solver panel (panel.enabled=true): the band and the curriculum are its success "
                "rates"
            )
        return self

    @property
    def targets_per_round(self) -> int:
        return self.per_round or math.ceil(self.n * self.oversample / self.rounds)


class SelfplayRecipe(Recipe[Config]):
    """Rounds (`play_round`), then `construct` merges them; labels and distillation as every recipe.
    No panel shards: the solvers run inside each round, since the curriculum needs their results."""

    name = "selfplay"
    description = RECIPES["selfplay"].description  # one wording: `synth recipes` lists it without importing
    Config = Config

    def rounds(self) -> int:
        return self.config.rounds

    @cached_property
    def targets(self) -> list:
        """The corpus documents that can be a question's answer."""
        corpus = self.world.corpus
        targets = eligible_targets(corpus, self.config.targets)
        if not targets:
            raise ConfigError(
                f"corpus {corpus.name} has no usable target: no document with a title of at most "
                f"{self.config.targets.max_answer_words} words and at least "
                f"{self.config.targets.min_document_words} words of text; "
                "lower targets.min_document_words or raise targets.max_answer_words"
            )
        return targets

    def runs_panel(self) -> bool:
        return False  # the solvers run inside each round: the curriculum needs their results

    def round_models(self) -> list[str]:
        return [self.config.proposer.model, self.config.rag.judge_model, *self.panel_models()]

    async def play_round(self, index: int, earlier: list[Round]) -> Round:
        """Round `index`: its targets, at the depth the round before chose; `earlier`: those rounds."""
        config, context, world = self.config, self.context, self.world
        searches = earlier[-1].statistics["next_searches"] if earlier else config.curriculum.start_searches
        targets = sample_targets(self.targets, config.seed, index * config.targets_per_round, config.targets_per_round)
        short = (
            f" (the corpus has {len(self.targets)} targets in all)" if len(targets) < config.targets_per_round else ""
        )
        context.progress.log(
            f"round {index + 1}/{config.rounds}: {len(targets)} targets{short}, {searches} searches requested"
        )
        proposer_client = context.llm_session({"proposer": config.proposer.model}).client("proposer")
        proposer = Proposer(
            config.proposer,
            proposer_client,
            self.tools(config.proposer.retriever, None),
            config.seed,
            world.corpus.name,
            log=context.progress.log,
        )
        proposals = await proposer.propose(targets, searches, index) if targets else []
        rejected = Counter(p.outcome.reason for p in proposals if not isinstance(p.outcome, Item))
        candidates = [p.outcome for p in proposals if isinstance(p.outcome, Item)]
        funnel = [
            FunnelStage(
                stage="proposal", input=len(proposals), kept=len(candidates), dropped=dict(sorted(rejected.items()))
            )
        ]

        judge = context.llm_session({"rag_judge": config.rag.judge_model}).client("rag_judge")
        chain = self._gates([item for stage in earlier for item in stage.items], judge)
        verified = await chain.run_async(candidates)
        funnel += list(chain.stages.values())
        solved = await self._solve(verified) if verified else _Solved()
        verdicts = list(chain.verdicts) + solved.verdicts
        funnel += solved.funnel
        decision = next_searches(config.curriculum, searches, solved.mean_success)
        proposer_trajectories = _judged_proposals(proposals, verdicts, solved.attempts)
        statistics = _round_statistics(
            index, searches, proposals, verified, solved.kept, solved.mean_success, decision, funnel
        )
        context.progress.log(
            f"round {index + 1}: {len(candidates)} questions, {len(verified)} verified, {len(solved.kept)} in band; "
            f"next round: {decision.searches} searches ({decision.decision}: {decision.reason})"
        )
        return Round(
            items=solved.kept,
            verdicts=verdicts,
            attempts=solved.attempts,
            labels=solved.labels,
            trajectories=proposer_trajectories + solved.trajectories,
            funnel=funnel,
            statistics=statistics,
            models={
                "proposer": proposer_client.model_id,
                "rag_judge": judge.model_id,
                **{f"solver:{name}": model for name, model in solved.solvers.items()},
            },
        )

    async def _solve(self, verified: list[Item]) -> "_Solved":
        """The solver panel on the verified questions, consensus labels, then the band."""
        config = self.config
        shard = await self.attempt(verified)  # the base's panel shard, and its consensus
        labeled = self.consensus(verified, [shard])
        attempts, trajectories, solvers = shard.attempts, shard.trajectories, shard.solvers
        band = FilterChain([BandFilter(config.band, {label.item_id: label for label in labeled.labels})])
        kept = band.run(labeled.items)
        kept_ids = {item.id for item in kept}
        rates = [search_success(label.pass_rates) or 0.0 for label in labeled.labels]
        return _Solved(
            kept=kept,
            attempts=attempts,
            trajectories=trajectories,
            verdicts=labeled.verdicts + band.verdicts,
            labels=[label for label in labeled.labels if label.item_id in kept_ids],
            funnel=[labeled.stage, *band.stages.values()],
            mean_success=sum(rates) / len(rates) if rates else None,
            solvers=solvers,
        )

    def _gates(self, earlier_items: list[Item], judge) -> FilterChain:
        """The configured checks (dedup and near-dup also against earlier rounds and versions), then
        the judge: RAG verification, the one gate that calls a model, last."""
        config = self.config
        chain = self.check_chain(earlier_items)
        chain.filters.append(RAGVerifier(config.rag, judge, self.tools(config.proposer.retriever, None)))
        return chain

    def streams_rounds(self) -> bool:
        return True

    def round_candidates(self, finished: Round, emitted: int) -> list[Item]:
        """Construction keeps the first `n` of every round's items, earlier rounds first."""
        return finished.items[: max(0, self.config.n - emitted)]

    def construct(self, rounds: list[Round]) -> Construction:
        """Every round's kept items, up to `n` (earlier rounds first); the rest is over quota."""
        quota = self.quota([item for stage in rounds for item in stage.items], self.config.n)
        chosen = quota.chosen
        chosen_ids = {item.id for item in chosen}
        funnel = [*_merge_funnels([stage for r in rounds for stage in r.funnel]), quota.stage]
        verdicts = [v for r in rounds for v in r.verdicts if v.item_id in chosen_ids or not v.kept] + quota.verdicts
        models = {key: value for r in rounds for key, value in r.models.items() if value}
        statistics = {
            "corpus": self.world.corpus.name,
            "corpus_documents": len(self.world.corpus),
            "eligible_targets": len(self.targets),
            "retriever": self.world.lineage(self.config.world.retriever),
            "rounds": [r.statistics for r in rounds],
            "difficulty": dict(Counter(item.difficulty for item in chosen)),
            "items_per_searches": dict(Counter(item.hops for item in chosen)),
        }
        return Construction(
            items=chosen,
            verdicts=verdicts,
            labels=[label for r in rounds for label in r.labels if label.item_id in chosen_ids],
            attempts=[attempt for r in rounds for attempt in r.attempts],
            trajectories=[trajectory for r in rounds for trajectory in r.trajectories],
            funnel=funnel,
            statistics=statistics,
            models=models,
            kg_snapshot=self.world.snapshot,
        )

    def labels_per_item(self) -> bool:
        return True  # its label publishes the construction's items as they are

    def label(self, construction: Construction, shards: list[PanelShard]) -> RecipeResult:
        """The rounds already labeled and banded every item: construction is what is published."""
        tables = {
            "items": construction.items,
            "verdicts": construction.verdicts,
            "labels": construction.labels,
            "attempts": construction.attempts,
            "trajectories": construction.trajectories,
        }
        return RecipeResult(
            tables=tables,
            funnel=construction.funnel,
            models=construction.models,
            kg_snapshot=construction.kg_snapshot,
            statistics=construction.statistics,
        )


@dataclass
class _Solved:
    """What the solver side of a round produced (empty when no question was verified)."""

    kept: list[Item] = field(default_factory=list)
    attempts: list[SolverAttempt] = field(default_factory=list)
    trajectories: list[Trajectory] = field(default_factory=list)
    verdicts: list[FilterVerdict] = field(default_factory=list)
    labels: list[DifficultyLabel] = field(default_factory=list)
    funnel: list[FunnelStage] = field(default_factory=list)
    mean_success: float | None = None
    """Mean pooled search success over the verified questions: the curriculum's signal."""
    solvers: dict[str, str] = field(default_factory=dict)


def _judged_proposals(proposals: list[Proposal], verdicts: list[FilterVerdict], attempts) -> list[Trajectory]:
    """Proposer trajectories with their outcome: the first gate that dropped the question (or the
    proposal's own failure), `correct` = the question was verified and tried by the solvers,
    `selected` = it passed every gate and the band (what `synth export --role proposer` writes), and
    SSP's proposer reward: 1 - solver success for a tried question, 0 for one that failed a gate."""
    dropped = {}
    for verdict in verdicts:
        if not verdict.kept:
            dropped.setdefault(verdict.item_id, verdict.reason)
    success: dict[str, list[bool]] = {}
    for attempt in attempts:
        if attempt.condition == "search" and not is_model_failure(attempt.failure):  # a failed call is no verdict
            success.setdefault(attempt.item_id, []).append(attempt.correct)
    judged = []
    for proposal in proposals:
        trajectory = proposal.trajectory
        reason = dropped.get(trajectory.item_id) if isinstance(proposal.outcome, Item) else proposal.outcome.reason
        solved = success.get(trajectory.item_id)
        rate = sum(solved) / len(solved) if solved else None
        judged.append(
            trajectory.model_copy(
                update={
                    "reject_reason": reason,
                    "correct": rate is not None,
                    "selected": reason is None,
                    "metadata": {
                        **trajectory.metadata,
                        "solver_success": rate,
                        "reward": round(1.0 - rate, 4) if rate is not None else 0.0,
                    },
                }
            )
        )
    return judged


def _round_statistics(index, searches, proposals, verified, kept, solved, decision, funnel) -> dict:
    questions = [p.outcome for p in proposals if isinstance(p.outcome, Item)]
    made = [len(p.trajectory.metadata["queries"]) for p in proposals]
    return {
        "round": index,
        "requested_searches": searches,
        "targets": len(proposals),
        "questions": len(questions),
        "mean_searches_made": round(sum(made) / len(made), 2) if made else None,
        "rag_verified": len(verified),
        "in_band": len(kept),
        "solver_success": round(solved, 4) if solved is not None else None,
        "difficulty": dict(Counter(item.difficulty for item in kept)),
        "dropped": {f"{stage.stage}:{reason}": count for stage in funnel for reason, count in stage.dropped.items()},
        "next_searches": decision.searches,
        "decision": decision.decision,
        "reason": decision.reason,
    }


def _merge_funnels(stages: list[FunnelStage]) -> list[FunnelStage]:
    """Rounds' funnels summed stage by stage, in order of first appearance."""
    merged: dict[str, FunnelStage] = {}
    for stage in stages:
        merged[stage.stage] = add_stages(merged[stage.stage], stage) if stage.stage in merged else stage
    return list(merged.values())

"""Recipe `multihop`: knowledge-graph walks -> reverse-constructed unique questions -> cheap filters.

Thin over the library: the generator makes candidates, the filter chain judges them, and this
module balances hop counts, stops at `n` items (or the attempt budget), and reports the funnel.
"""

import asyncio
import math
import random
import time
from collections import Counter
from collections.abc import Callable
from functools import cached_property
from typing import Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from synth.audit.flags import RelationFlags, relation_flags
from synth.contract.matching import normalize_answer
from synth.errors import ConfigError
from synth.filters.base import FilterChain
from synth.filters.checks import Checks, find_check, move_old_check_keys
from synth.filters.consensus import pass_rates
from synth.filters.contamination import ContaminationConfig
from synth.filters.dedup import DedupConfig
from synth.filters.format import FormatConfig
from synth.filters.leakage import LeakageConfig
from synth.filters.near_dup import NearDupConfig
from synth.filters.quality import quality_report
from synth.filters.shortcut import ShortcutConfig
from synth.generators.base import Rejection
from synth.generators.guidance import path_guidance
from synth.generators.kg_walk import WalkConfig
from synth.generators.llm_verbalizer import LLMVerbalizer
from synth.generators.multihop import MultihopGenerator
from synth.generators.rephrase_judge import RephraseJudge
from synth.generators.reverse import ConstructConfig
from synth.kg.contradictions import contradicting_edges
from synth.kg.described_countries import contradicted_countries
from synth.kg.graph import KnowledgeGraph
from synth.kg.multiplicity import WorldConfig, WorldModel
from synth.kg.relation_profile import excluded_facts, graph_overrides, wrong_facts
from synth.kg.types import EntityTypes
from synth.kg.unstated import unstated_facts
from synth.pipelines.base import (
    Construction,
    PanelShard,
    Recipe,
    RecipeResult,
    Round,
)
from synth.pipelines.candidate_line import CandidateLine, Rephrasing
from synth.pipelines.recipe_config import RecipeConfig
from synth.pipelines.recipes import RECIPES
from synth.schemas import Document, FunnelStage, Hop, Item
from synth.search.corpus import KGCorpus, fact_sentence
from synth.search.world import World
from synth.search.world_settings import WorldSettings, move_world_keys

YIELD_EVERY_S = 0.02
"""Construction hands the event loop over (the panel's requests go on) at least this often: once
per candidate cost more than the candidate on short chains (40,000 loop turns for 1,000 items)."""


class Config(RecipeConfig):
    n: int = Field(default=50, ge=1, description="Items to publish.")
    seed: int = Field(default=0, description="Same seed and config reproduce the same items.")
    hops: list[int] = Field(default=[2, 3, 4], description="Chain lengths; the published mix is balanced across them.")
    world: WorldSettings = Field(
        default_factory=WorldSettings,
        description="The graph the walks use and its corpus the agents search (retriever, k, contract).",
    )
    exclude_relations: list[str] = Field(
        default=["/dataworld/gardening_hint/split_to", "/user/jg/default_domain/olympic_games/sports"],
        description="Relations never used: Freebase curation hints and duplicates of other relations.",
    )
    style: Literal["plain", "obfuscated"] = Field(
        default="plain",
        description="plain: a named anchor and a compact chain (MuSiQue-like); obfuscated: the anchor and every "
        "intermediate "
        "described by facts of their own, so no single cue finds the answer (WebShaper/BrowseComp-like, for strong "
        "models).",
    )
    verbalizer: Literal["template", "llm"] = Field(
        default="template",
        description="template: deterministic phrasing; llm: the generator model rephrases each template question, "
        "which stays whenever the rephrasing leaks, drops a cue or fails.",
    )
    generator_model: str = Field(
        default="embedded", description="Declared model for the generator role (verbalizer=llm)."
    )
    rephrase_judge_model: str | None = Field(
        default=None,
        description="Declared model that confirms each rephrasing passing the textual checks asks the same as the "
        "template "
        "(verbalizer=llm); a no keeps the template (judge_not_equivalent).",
    )
    max_attempts_per_item: int = Field(
        default=400,
        ge=1,
        description="Give up after n * this many candidates (200 published 47 of 50 at 2-4 hops once a team's "
        "place became many-valued: 4-hop chains that stay unique in the world are rarer).",
    )
    walk: WalkConfig = WalkConfig()
    reverse: ConstructConfig = ConstructConfig()
    multiplicity: WorldConfig = Field(
        default_factory=WorldConfig,
        description="The larger world a question is checked against: answers it would have beyond the graph.",
    )
    checks: Checks = Field(
        default_factory=lambda: [
            FormatConfig(),
            LeakageConfig(),
            DedupConfig(),
            NearDupConfig(),
            ContaminationConfig(),
            ShortcutConfig(),
        ],
        description="The cheap checks every candidate passes, in order (synth.filters.CHECK_KINDS); a mapping "
        "changes entries by kind, e.g. checks.near_dup.threshold=0.7.",
    )
    oversample: float = Field(
        default=1.0,
        ge=1.0,
        le=10.0,
        description="With the panel on, make n * oversample candidates, since consensus drops some; the surplus is "
        "dropped as over_quota.",
    )

    @model_validator(mode="before")
    @classmethod
    def _old_keys(cls, values):
        return move_old_check_keys(move_world_keys(values, tuple(WorldConfig.model_fields)))

    @field_validator("hops", mode="before")
    @classmethod
    def _hops_list(cls, value):
        return [value] if isinstance(value, int) else value

    @field_validator("hops")
    @classmethod
    def _hops_positive(cls, value: list[int]) -> list[int]:
        if not value or any(hop < 1 or hop > 8 for hop in value):
            raise ValueError("hops must be a non-empty list of integers between 1 and 8, e.g. [2, 3]")
        return sorted(set(value))


def require_capacity(n: int, target: int, kg, hops: list[int]) -> None:
    """Refuse an `n` the graph cannot make before spending any time on it: a question's answer is
    one of the graph's connected entities, and each answer yields at most one question per chain
    length (the distinct-answer and near-duplicate checks drop the rest), so that product bounds what
    a run can publish. Runs come out far below it (the walks, cues and checks drop most candidates)."""
    connected = int((kg.degrees > 0).sum())
    bound = connected * len(hops)
    if target > bound:
        raise ConfigError(
            f"n={n:,} is more than the graph {kg.snapshot} can make: at most ~{bound:,} questions "
            f"({connected:,} connected entities x {len(hops)} chain length(s)), and far fewer in practice; lower n "
            "(the bundled graph "
            "yields a few thousand) or import a bigger graph (`synth kg import`)"
        )


class MultihopRecipe(Recipe[Config]):
    """The recipe in stages, each resumable on its own: `construct` (walks, reverse construction,
    cheap filters: seconds), `attempt` (the solver panel on one shard of the candidates: the model
    calls), `label` (consensus over every shard, quotas, statistics) and, with `distill.enabled`,
    `distill` (teacher rollouts on one shard of the labeled items) and `add_distillation`."""

    name = "multihop"
    description = RECIPES["multihop"].description  # one wording: `synth recipes` lists it without importing
    Config = Config

    @cached_property
    def world(self) -> World:
        """The bundled (or configured) graph, its corpus and the search tools every agent of the run uses."""
        if self.config.world.corpus is not None:
            raise ConfigError(
                "multihop searches the corpus of its own graph (its questions' evidence is there): drop world.corpus, "
                "or use the selfplay recipe to make questions from a corpus file"
            )
        return super().world

    @property
    def full(self) -> KnowledgeGraph:
        return self.world.graph

    def leak_names(self):
        return self.kg.names

    @cached_property
    def kg(self) -> KnowledgeGraph:
        """The graph answers are counted in: without the excluded relations, and without single facts
        readers found wrong (the store's audits, the graph's override file) or that contradict their
        relation's type (synth.kg.contradictions). Questions are worded from `stated`."""
        kg = self.full.without_relations(self.config.exclude_relations)
        if not self.config.multiplicity.enabled:
            return kg
        return kg.without_edges(wrong_edges(kg, self.config.multiplicity, self.flags))

    @cached_property
    def stated(self) -> KnowledgeGraph:
        """The graph questions are worded from: `kg` without the facts a question counts but never
        states (synth.kg.unstated); answers are still counted in `kg`."""
        if not self.config.multiplicity.enabled:
            return self.kg
        return self.kg.without_edges(unstated_edges(self.kg, self.config.multiplicity))

    @cached_property
    def flags(self) -> RelationFlags | None:
        """What the store's audits said of this graph's relations and facts (synth.audit.flags)."""
        if not self.config.multiplicity.audit_flags:
            return None
        return relation_flags(self.context.settings, self.full.snapshot, names=self.full.names)

    def evidence(self, item: Item) -> list[Document]:
        """What the gold_evidence condition shows: each evidence document whole, or cut down to the
        sentences that state the item's path and cue edges (a few dozen tokens instead of ~1,200,
        and a cleaner test of whether the question follows from its facts)."""
        if self.config.panel.gold_evidence == "documents":
            return super().evidence(item)
        edges = item.path + [Hop.model_validate(edge) for edge in item.metadata.get("cue_edges", [])]
        statements: dict[tuple[str, str], list[str]] = {}
        for edge in edges:
            key = (edge.evidence_doc_id or edge.head, edge.head)
            statements.setdefault(key, []).append(fact_sentence(self.full, edge.head, edge.relation, edge.tail))
        return [
            Document(id=doc_id, title=self.full.name(head), text=" ".join(dict.fromkeys(sentences)), entity_id=head)
            for (doc_id, head), sentences in statements.items()
        ]

    def construct(self, rounds: list[Round]) -> Construction:
        return asyncio.run(self.construct_stream(rounds, lambda item: None))

    def streams_construction(self) -> bool:
        return True

    async def construct_stream(self, rounds: list[Round], emit: Callable[[Item], None]) -> Construction:
        """Walks, reverse construction and the checks, one candidate at a time, yielding to the event
        loop between candidates (the panel's requests go on meanwhile); each accepted candidate is
        emitted at once (after its rephrasing, in acceptance order, with verbalizer=llm)."""
        config, context, kg = self.config, self.context, self.kg
        target = math.ceil(config.n * config.oversample) if config.panel.enabled else config.n
        try:
            generator = MultihopGenerator(
                kg,
                config.walk,
                config.reverse,
                config.seed,
                evidence=KGCorpus(self.full),
                style=config.style,
                world=config.multiplicity,
                max_words=getattr(find_check(config.checks, "format"), "max_question_words", None),
                min_words=getattr(find_check(config.checks, "format"), "min_question_words", 1),
                flags=self.flags,
                items=target,
                stated=self.stated,
            )
        except ValueError as error:
            raise ConfigError(str(error)) from None
        chain = self.check_chain()
        rejected: dict[str, Counter] = {}
        require_capacity(config.n, target, kg, config.hops)
        accepted = {hops: 0 for hops in config.hops}
        quota = _quotas(target, config.hops)
        budget = config.n * config.max_attempts_per_item
        attempts = 0
        statistics: dict = {"verbalizer": "template"}
        models: dict[str, str] = {}
        phrasing = self._phrasing(statistics, models) if config.verbalizer == "llm" else None
        ordered = CandidateLine(emit)
        yielded = time.perf_counter()
        with context.progress.task("multihop candidates", total=target) as advance:
            while attempts < budget and any(accepted[hops] < quota[hops] for hops in config.hops):
                if time.perf_counter() - yielded >= YIELD_EVERY_S:  # the rest of the run advances meanwhile
                    await asyncio.sleep(0)
                    yielded = time.perf_counter()
                hops = min(
                    (hops for hops in config.hops if accepted[hops] < quota[hops]),
                    key=lambda h: (accepted[h], h),
                )
                attempts += 1
                candidate = generator.attempt(hops)
                if isinstance(candidate, Rejection):
                    rejected.setdefault(candidate.stage, Counter())[candidate.reason] += 1
                    continue
                kept = chain.run([candidate])
                if kept:
                    accepted[hops] += 1
                    advance(1)
                    ordered.add(phrasing.rephrase(kept[0]) if phrasing is not None else kept[0])
        items = await ordered.finish()
        statistics["attempts"] = attempts
        if generator.world is not None:  # what the construction would not use, and why (lineage)
            statistics["untrusted_relations"] = generator.world.profiles.untrusted()
        if phrasing is not None:
            phrasing.record(statistics)
        shortcut = find_check(config.checks, "shortcut")
        if (shortcut is not None and shortcut.enabled) or config.panel.enabled:
            statistics["retriever"] = self.world.lineage(config.world.retriever)
        funnel = _funnel(attempts, rejected, chain)
        return Construction(
            items=items, verdicts=list(chain.verdicts), funnel=funnel, statistics=statistics, models=models
        )

    def _phrasing(self, statistics: dict, models: dict) -> Rephrasing:
        """The generator model's rephrasing of each accepted candidate (verbalizer=llm)."""
        config, context = self.config, self.context
        client = context.llm_session({"generator": config.generator_model}).client("generator")
        judge = None
        if config.rephrase_judge_model:
            judge = RephraseJudge(
                context.llm_session({"rephrase_judge": config.rephrase_judge_model}).client("rephrase_judge")
            )
            models["rephrase_judge"] = judge.model
        models["generator"] = client.model_id
        context.progress.log(f"rephrasing each candidate with {client.model_id} ...")
        return Rephrasing(LLMVerbalizer(client, self.kg.name, all_names=self.kg.names, judge=judge))

    def label(self, construction: Construction, shards: list[PanelShard]) -> RecipeResult:
        config = self.config
        items, verdicts = construction.items, list(construction.verdicts)
        funnel = list(construction.funnel)
        statistics, models = dict(construction.statistics), dict(construction.models)
        tables: dict[str, list] = {}
        if shards:
            panel = self.panel_labels(items, shards, n=config.n)
            items = panel.items
            verdicts += panel.verdicts
            funnel += panel.funnel
            tables.update(panel.tables)
            models.update(panel.models)
            statistics.update(_panel_statistics(panel.labeled))
        statistics.update(_statistics(items))
        world = WorldModel(self.kg, config.multiplicity) if config.multiplicity.enabled else None
        statistics["quality"] = quality_report(items, self.full.names, world)
        random.Random(config.seed).shuffle(items)
        kept_ids = {item.id for item in items}
        tables.update(
            items=items, verdicts=[verdict for verdict in verdicts if verdict.item_id in kept_ids or not verdict.kept]
        )
        return RecipeResult(
            tables=tables, funnel=funnel, kg_snapshot=self.kg.snapshot, statistics=statistics, models=models
        )

    def select(self, items: list[Item], n: int) -> tuple[list[Item], list[Item]]:
        return _balanced(items, n, self.config.hops)

    @cached_property
    def _supports(self):
        return _graph_supports(self.full)

    def consensus_supports(self):
        return self._supports

    def labels_per_item(self) -> bool:
        return True

    def surely_chosen(self, candidates: list[Item], dropped: set[str], complete: bool) -> set[str]:
        """The quota keeps a balanced n (`_balanced`: round-robin over hop counts). Counted as if every
        undecided candidate survives and, while construction goes on, every candidate still to come
        does too (up to the hop's share of the target): more survivors only ever push an item out,
        so the items chosen then are chosen whatever happens."""
        config = self.config
        survivors = {hops: [] for hops in config.hops}
        for item in candidates:
            if item.id not in dropped:
                survivors[_requested(item)].append(item.id)
        available = {hops: len(ids) for hops, ids in survivors.items()}
        if not complete:
            made = Counter(_requested(item) for item in candidates)
            target = math.ceil(config.n * config.oversample) if config.panel.enabled else config.n
            for hops, share in _quotas(target, config.hops).items():
                available[hops] += max(0, share - made[hops])
        counts = _round_robin(available, config.n, config.hops)
        return {item_id for hops, ids in survivors.items() for item_id in ids[: counts[hops]]}

    def guidance(self, item: Item):
        """A guided teacher sees the construction path."""
        return path_guidance(item, self.full.name)


def _graph_supports(kg):
    """`supports(item, answer)`: does an entity named `answer` satisfy all of the item's constraints?"""
    by_name: dict[str, list[str]] = {}
    for entity_id, entity in kg.entities.items():
        by_name.setdefault(normalize_answer(entity.name), []).append(entity_id)

    def supports(item: Item, answer: str) -> bool:
        candidates = set(by_name.get(normalize_answer(answer), ()))
        for constraint in item.constraints:
            if not candidates:
                return False
            candidates &= kg.follow(constraint.anchor, constraint.steps)
        return bool(candidates)

    return supports


def _requested(item: Item) -> int:
    """The chain length the item was built for (its quota's key); `hops` are the effective hops."""
    return int(item.metadata.get("chain_hops", item.hops))


def _balanced(items: list[Item], n: int, hops: list[int]) -> tuple[list[Item], list[Item]]:
    """Up to n items, balanced across hop counts as far as the survivors allow; the rest is surplus."""
    by_hops = {hop: [item for item in items if _requested(item) == hop] for hop in hops}
    chosen: list[Item] = []
    while len(chosen) < n and any(by_hops.values()):
        for hop in hops:
            if by_hops[hop] and len(chosen) < n:
                chosen.append(by_hops[hop].pop(0))
    chosen_ids = {item.id for item in chosen}
    return chosen, [item for item in items if item.id not in chosen_ids]


def _round_robin(available: dict[int, int], n: int, hops: list[int]) -> dict[int, int]:
    """How many of each hop count `_balanced` chooses from `available` survivors per hop count."""
    chosen = dict.fromkeys(hops, 0)
    total = 0
    while total < n and any(chosen[hop] < available[hop] for hop in hops):
        for hop in hops:
            if chosen[hop] < available[hop] and total < n:
                chosen[hop] += 1
                total += 1
    return chosen


def _panel_statistics(labeled) -> dict:
    rates = {}
    for rate in pass_rates(labeled.attempts):
        rates[f"{rate.solver}/{rate.condition}"] = f"{rate.correct}/{rate.attempts}"
    statistics = {"panel_pass_rates": rates, "trajectories": len(labeled.trajectories)}
    if labeled.skipped_rules:
        statistics["consensus_rules_skipped"] = labeled.skipped_rules
    return statistics | labeled.label_reach


def _quotas(n: int, hops: list[int]) -> dict[int, int]:
    base, extra = divmod(n, len(hops))
    return {hop: base + (1 if index < extra else 0) for index, hop in enumerate(hops)}


def unstated_edges(kg: KnowledgeGraph, world: WorldConfig) -> np.ndarray:
    """A mask over `kg`'s edges of the facts a question counts but never states: countries a lead
    contradicts (synth.kg.described_countries: a reader denies them, yet one may be what makes another
    person fit: the raw-triple test found Amanda Lear's second citizenship), the classes of
    synth.kg.unstated, and the facts the override file's `not_of` rules out (an animated film's
    "filming locations", its settings: dropping them would change the relation's statistics)."""
    types = EntityTypes(kg)
    unstated = unstated_facts(kg, types) if world.unstated_facts else np.zeros(kg.num_triples, dtype=bool)
    if world.described_countries:
        unstated |= contradicted_countries(kg, types)
    return unstated | kg.edge_mask(excluded_facts(kg, graph_overrides(kg, world.relation_overrides)))


def wrong_edges(kg: KnowledgeGraph, world: WorldConfig, flags: RelationFlags | None = None) -> np.ndarray:
    """A mask over `kg`'s edges (out-index order) of the facts taken as false: those readers denied
    (the store's audits `flags`, the graph's override file) and those that contradict their
    relation's type."""
    wrong = contradicting_edges(kg, EntityTypes(kg), world.contradiction_share)
    read = set(flags.wrong_facts) if flags is not None else set()
    read |= wrong_facts(graph_overrides(kg, world.relation_overrides))
    return wrong | kg.edge_mask(read)


def _funnel(attempts: int, rejected: dict[str, Counter], chain: FilterChain) -> list[FunnelStage]:
    stages, remaining = [], attempts
    for stage in ("walk", "uniqueness", "types", "phrasing"):
        dropped = rejected.get(stage, Counter())
        kept = remaining - sum(dropped.values())
        stages.append(FunnelStage(stage=stage, input=remaining, kept=kept, dropped=dict(sorted(dropped.items()))))
        remaining = kept
    return stages + list(chain.stages.values())


def _statistics(items) -> dict:
    relations = Counter(hop.relation for item in items for hop in item.path)
    anchors = Counter(item.metadata["anchor"] for item in items)
    total_edges = sum(relations.values()) or 1
    return {
        "items_per_hops": dict(Counter(item.hops for item in items)),
        "difficulty": dict(Counter(item.difficulty for item in items)),
        "distinct_relations": len(relations),
        "top_relation_share": round(max(relations.values(), default=0) / total_edges, 3),
        "distinct_anchors": len(anchors),
    }

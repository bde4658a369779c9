"""Self-play proposer: given a target answer from the corpus and a number of searches, an agent
searches the world and writes a question whose answer is the target.

Search Self-Play (SSP, Lu et al. 2025) trains one model as proposer and solver; for a data
pipeline the proposer is a generator whose ground truth is known by construction (the target) and
whose evidence is exactly what its searches returned, which the RAG verification
(`synth.filters.rag_verify`) then checks. Targets are document titles (on the bundled world, entity
names), so any Search-R1 corpus works, not only a knowledge graph.

Input: targets (`Target`) and the requested searches; output: an `Item` per proposal that ended
with a `<question>` (with the proposer's queries and retrieved ids in `metadata.proposer`), a
`Rejection` otherwise, and one proposer `Trajectory` per rollout either way (raw output kept).
"""

import random
import re
from dataclasses import dataclass

from pydantic import Field, model_validator

from synth.config import FrozenConfig
from synth.contract.matching import normalize_answer
from synth.generators.base import Rejection
from synth.hashing import content_hash
from synth.llm.client import LLMClient
from synth.schemas import Item, Provenance, Trajectory
from synth.search.agent import Rollout, SearchAgent
from synth.search.budget import PROPOSER_AGENT, AgentBudget, nest_agent_keys
from synth.search.corpus import Corpus
from synth.search.proposing import PROPOSING
from synth.search.world import RetrieverChoice


class TargetConfig(FrozenConfig):
    max_answer_words: int = Field(default=4, ge=1, description="Longest document title usable as a target answer.")
    min_document_words: int = Field(
        default=12, ge=1, description="Shortest document (in words) whose title can be a target: it must say something."
    )


class ProposerConfig(FrozenConfig):
    model: str = Field(default="embedded", description="Declared model for the proposer role.")
    retriever: RetrieverChoice | None = Field(
        default=None,
        description="The proposer searches with this retriever (bm25, dense, hybrid or a /retrieve URL); "
        "default: world.retriever.",
    )
    agent: AgentBudget = Field(
        default_factory=AgentBudget,
        description="The proposer's tokens per turn, sampling, demonstrations and protocol (auto: native where the "
        "backend has it, json otherwise; json makes `propose` available only after the requested searches); "
        "max_turns caps the requested searches plus extra_turns; unset keys: 32 turns of 512 tokens on served "
        "models, of 96 on the embedded one.",
    )
    extra_turns: int = Field(
        default=2, ge=1, description="Turns beyond the requested searches (for the question and one slip)."
    )
    show_target_document: bool = Field(
        default=True,
        description="Show the proposer the target's own document (its key facts) so it knows what to search around; "
        "the document counts as evidence only if a search of its own finds it.",
    )
    document_words: int = Field(default=80, ge=10, description="Words of the target document shown to the proposer.")

    @model_validator(mode="before")
    @classmethod
    def _agent_keys(cls, values):
        return nest_agent_keys(values)


@dataclass(frozen=True)
class Target:
    """A ground-truth answer the proposer must write a question for."""

    answer: str
    doc_id: str
    """The document it is the title of (its entity, on a knowledge-graph corpus)."""
    entity_id: str | None
    text: str


def eligible_targets(corpus: Corpus, config: TargetConfig) -> list[Target]:
    """One target per distinct title: short titles (names, not sentences) of documents long enough
    to hold facts, in corpus order."""
    seen: set[str] = set()
    targets = []
    for document in corpus.documents:
        title = " ".join(document.title.split())
        key = normalize_answer(title)
        if not key or key in seen or len(title.split()) > config.max_answer_words or key.replace(" ", "").isdigit():
            continue
        if len(document.text.split()) < config.min_document_words:
            continue
        seen.add(key)
        targets.append(Target(title, document.document_id or document.id, document.entity_id, document.text))
    return targets


def sample_targets(targets: list[Target], seed: int, start: int, count: int) -> list[Target]:
    """`count` targets from position `start` of one seeded shuffle: rounds take consecutive slices,
    so no target is proposed twice in a run and every round is reproducible on its own."""
    order = list(targets)
    random.Random(seed).shuffle(order)
    return order[start : start + count]


def _tools_protocol(budget: AgentBudget, client: LLMClient) -> str:
    """`auto`: the tool-call channel where there is one, else constrained JSON calls: a proposer
    must make several calls, which small models rarely write correctly as free text."""
    return budget.resolved_protocol(client.native_tool_calls(), fallback="json")


@dataclass
class Proposal:
    """One proposer rollout, as an item (if it wrote a question) or a rejection, plus its trajectory."""

    target: Target
    outcome: Item | Rejection
    trajectory: Trajectory


class Proposer:
    """Runs the proposer agent on a batch of targets at one requested search depth."""

    def __init__(self, config: ProposerConfig, client: LLMClient, tools, seed: int, corpus_name: str, log=None):
        self.config, self.client, self.seed, self.corpus_name = config, client, seed, corpus_name
        self.tools = tools
        self.log = log
        self.budget = PROPOSER_AGENT.resolve(config.agent, client)
        self.protocol = _tools_protocol(self.budget, client)

    def task_text(self, target: Target, searches: int) -> str:
        lines = [f"Target answer: {target.answer}"]
        if self.config.show_target_document:
            words = target.text.split()
            excerpt = " ".join(words[: self.config.document_words]) + (
                " ..." if len(words) > self.config.document_words else ""
            )
            lines.append(f"What the collection says about it: {excerpt}")
        lines.append(f"Make {searches} different searches, then write the question.")
        return "\n".join(lines)

    async def propose(self, targets: list[Target], searches: int, round_index: int) -> list[Proposal]:
        turns = min(searches + self.config.extra_turns, self.budget.max_turns or searches + self.config.extra_turns)
        budget = self.budget.model_copy(update={"max_turns": turns, "protocol": self.protocol})
        agent = SearchAgent(
            self.client,
            self.tools,
            budget,
            stage="propose",
            log=self.log,
            task=PROPOSING,
            required_calls=searches,
            defaults=PROPOSER_AGENT,
        )
        seeds = [
            int(
                content_hash(
                    {"target": t.doc_id, "seed": self.seed, "searches": searches, "round": round_index}, length=8
                ),
                16,
            )
            for t in targets
        ]
        rollouts = await agent.run([(self.task_text(target, searches), seed) for target, seed in zip(targets, seeds)])
        return [
            self._proposal(target, rollout, searches, round_index, agent.recorded_schemas)
            for target, rollout in zip(targets, rollouts)
        ]

    def _proposal(
        self, target: Target, rollout: Rollout, searches: int, round_index: int, schemas: list[dict]
    ) -> Proposal:
        question = _clean_question(rollout.answer)
        retrieved = list(dict.fromkeys(rollout.retrieved))
        queries = list(dict.fromkeys(" ".join(query.split()) for query in rollout.queries))
        raw = next((m.content for m in reversed(rollout.messages) if m.role == "assistant" and m.content), None)
        if question is not None:
            item_id = content_hash(
                {"recipe": "selfplay", "target": target.doc_id, "answer": target.answer, "question": question}
            )
        else:
            item_id = content_hash(
                {
                    "recipe": "selfplay",
                    "target": target.doc_id,
                    "round": round_index,
                    "searches": searches,
                    "seed": self.seed,
                }
            )
        trajectory = Trajectory(
            id=content_hash(
                {"proposal": item_id, "model": self.client.model_id, "round": round_index, "searches": searches}
            ),
            item_id=item_id,
            role="proposer",
            model=self.client.model_id,
            messages=rollout.messages,
            tools=schemas,
            final_answer=question,
            num_tool_calls=rollout.num_tool_calls,
            finish_reason=rollout.finish_reason,
            usage=rollout.usage,
            metadata={
                "target": target.answer,
                "target_doc_id": target.doc_id,
                "round": round_index,
                "requested_searches": searches,
                "queries": queries,
                "retrieved": retrieved,
                "malformed_calls": rollout.malformed,
                "protocol": self.protocol,
                "reasoning_tokens": rollout.reasoning_tokens,
                "reasoning_turns": rollout.reasoning_turns,
                **self.tools.trajectory_metadata,
            },
        )
        if question is None:
            reason = "no_question" if rollout.finish_reason == "answered" else rollout.finish_reason or "no_question"
            return Proposal(target, Rejection("proposal", reason, raw or ""), trajectory)
        item = Item(
            id=item_id,
            question=question,
            answer=target.answer,
            recipe="selfplay",
            hops=searches,
            answer_entity_id=target.entity_id,
            evidence_doc_ids=retrieved,
            provenance=Provenance(
                generator="selfplay_proposer",
                seed=self.seed,
                kg_snapshot=self.corpus_name,
                verbalizer=self.client.model_id,
                models={"proposer": self.client.model_id},
                raw_output=raw,
            ),
            metadata={
                "round": round_index,
                "target_doc_id": target.doc_id,
                "proposer_trajectory_id": trajectory.id,
                "proposer": {"requested_searches": searches, "queries": queries, "retrieved": retrieved},
            },
        )
        return Proposal(target, item, trajectory)


def _clean_question(text: str | None) -> str | None:
    """The proposed question without a 'Question:' label or wrapping quotes; None if empty."""
    if text is None:
        return None
    text = re.sub(r"^\s*question\s*:\s*", "", text, flags=re.IGNORECASE).strip().strip('"').strip()
    return text or None

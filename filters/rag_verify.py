"""RAG verification of proposed questions (SSP): a judge model answers each question from exactly
the documents the proposer's searches returned, optionally shuffled with distractor documents
drawn from the other proposals of the same batch, and must give the target answer. A question its
own evidence does not answer has a wrong or unsupported ground truth and is dropped.

The judge is an ordinary gold-evidence reader (`ModelSolver`, condition `gold_evidence`), so its
calls are cached, seeded per item and counted like the panel's. Every verdict records what the
judge was shown (`documents`, `distractors`, `shown` in that order) and what it answered, so the
evidence of each published question can be read back with SQL from the `verdicts` table.
"""

import asyncio
import random
from collections.abc import Sequence

from pydantic import Field

from synth.config import FrozenConfig
from synth.contract.matching import match_answer
from synth.filters.base import CheckResult, Filter
from synth.hashing import item_seed
from synth.llm.client import LLMClient
from synth.schemas import Document, FilterVerdict, Item
from synth.search.budget import AgentBudget
from synth.search.tools import SearchTools
from synth.solving.solvers import ModelSolver


class RAGConfig(FrozenConfig):
    judge_model: str = Field(
        default="embedded", description="Declared model that answers each question from the proposer's documents."
    )
    distractors: int = Field(
        default=2, ge=0, le=20, description="Documents from other proposals of the round shuffled in with the evidence."
    )
    samples: int = Field(
        default=1, ge=1, le=16, description="Judge answers per question; at least half must match the target."
    )
    temperature: float = Field(default=0.0, ge=0.0, description="Judge sampling temperature.")
    answer_tokens: int = Field(default=24, ge=4, description="Tokens for the judge's answer.")
    demonstrations: bool = Field(default=True, description="Show the judge two worked examples (request only).")
    f1_threshold: float = Field(
        default=0.8, gt=0.0, le=1.0, description="Token F1 at which a judge's answer matches the target."
    )


class RAGVerifier(Filter):
    """Batch filter: one judge request per question, all sent together."""

    name = "rag_verification"

    def __init__(self, config: RAGConfig, client: LLMClient, tools: SearchTools):
        self.config, self.client, self.tools = config, client, tools
        self.shown: dict[str, list[Document]] = {}
        """Item id -> the documents the judge saw, in the order it saw them."""

    def check(self, item: Item) -> CheckResult:
        return asyncio.run(self._judge([item]))[0]

    def apply(self, items: Sequence[Item]) -> list[FilterVerdict]:
        return asyncio.run(self.apply_async(items))

    async def apply_async(self, items: Sequence[Item]) -> list[FilterVerdict]:
        return [self._verdict(item, result) for item, result in zip(items, await self._judge(list(items)))]

    async def _judge(self, items: list[Item]) -> list[CheckResult]:
        plans = self._plan(items)
        reader = ModelSolver(
            "rag_judge",
            self.client,
            self.tools,
            lambda item: self.shown[item.id],
            ("gold_evidence",),
            AgentBudget(temperature=self.config.temperature, demonstrations=self.config.demonstrations),
            answer_tokens=self.config.answer_tokens,
            stage="rag",
        )
        answerable = [item for item in items if self.shown[item.id]]
        outcomes = dict(
            zip(
                (item.id for item in answerable),
                await reader.solve(answerable, "gold_evidence", self.config.samples) if answerable else [],
            )
        )
        results: list[CheckResult] = []
        for item in items:
            details = {**plans[item.id], "judge": self.client.model_id}
            if item.id not in outcomes:
                results.append((False, "no_evidence", details))
                continue
            samples = outcomes[item.id]
            failure = next((outcome.failure for outcome in samples if outcome.failure), None)
            answers = [outcome.answer for outcome in samples]
            correct = sum(
                match_answer(answer, item.answers, self.config.f1_threshold)[0] != "none" for answer in answers
            )
            details.update(answers=answers, correct=correct, samples=len(samples))
            if failure is not None and correct == 0:
                results.append((False, "rag_judge_failed", {**details, "failure": failure}))
            elif correct == 0 or correct * 2 < len(samples):
                results.append((False, "rag_unverified", details))
            else:
                results.append((True, "rag_verified", details))
        return results

    def _plan(self, items: list[Item]) -> dict[str, dict]:
        """What each judge request shows: the item's evidence plus `distractors` documents of other
        items of the batch, shuffled by a seed of the item (the same on a rerun)."""
        own = {item.id: [document.id for document in self.tools.open_all(item.evidence_doc_ids)] for item in items}
        pool = list(dict.fromkeys(doc_id for item in items for doc_id in own[item.id]))
        plans = {}
        for item in items:
            rng = random.Random(item_seed(item, "rag_distractors"))
            others = [doc_id for doc_id in pool if doc_id not in set(own[item.id])]
            distractors = rng.sample(others, min(self.config.distractors, len(others))) if own[item.id] else []
            shown = own[item.id] + distractors
            rng.shuffle(shown)
            self.shown[item.id] = self.tools.open_all(shown)
            plans[item.id] = {"documents": own[item.id], "distractors": distractors, "shown": shown}
        return plans

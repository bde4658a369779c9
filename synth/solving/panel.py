"""The solver panel: every solver attempts every item k times under each of its conditions.

Conditions (as ASearcher, R1-Searcher, SSP and BMGQ measure them): closed_book (question only:
is it memorized?), search (an agent loop over the world's tools: can a searcher find it?), and
gold_evidence (the item's evidence documents: is it answerable at all?). Answers are matched by
normalized exact match, aliases and token F1 (`f1_threshold`), then optionally by a judge model. Every attempt is
stored; search
attempts keep their trajectory, which the distillation issue reuses.
"""

import asyncio
from collections.abc import Callable
from typing import Literal

from pydantic import Field, model_validator

from synth.config import FrozenConfig
from synth.contract.matching import match_answer
from synth.hashing import content_hash
from synth.schemas import Item, SolverAttempt, Trajectory
from synth.schemas.solving import Condition
from synth.search.budget import AgentBudget, nest_agent_keys
from synth.search.tools import SearchTools
from synth.search.world import RetrieverChoice
from synth.solving.answer_judge import AnswerJudge
from synth.solving.solvers import Outcome, Solver
from synth.solving.trajectory_reading import read_trajectory


class SolverSpec(FrozenConfig):
    name: str = Field(description="Name in attempts and labels.")
    model: str | None = Field(default=None, description="A declared model (flows.yaml `models:`); or set `baseline`.")
    baseline: Literal["bm25_reader"] | None = Field(
        default=None, description="A model-free baseline instead of a model."
    )
    conditions: list[Condition] = Field(
        default=["closed_book", "search", "gold_evidence"], description="closed_book, search, gold_evidence."
    )
    k: int = Field(
        default=4,
        ge=1,
        description="Samples per item and condition. Labels come from the search pass rate pooled over the panel: "
        "two model solvers at k=4 pool 8 attempts, enough for every label (at k=2, 4 attempts cannot give "
        "`hard`, a rate in (0, 0.25)); the run summary says which labels a panel could give.",
    )

    @model_validator(mode="after")
    def _model_or_baseline(self) -> "SolverSpec":
        if (self.model is None) == (self.baseline is None):
            raise ValueError(
                f"solver {self.name!r}: set exactly one of `model` (a declared model) and `baseline` (bm25_reader)"
            )
        if self.baseline is not None and self.conditions != ["search"]:
            raise ValueError(
                f"solver {self.name!r}: the {self.baseline} baseline only runs the search condition; set "
                "conditions=[search]"
            )
        return self


def _default_solvers() -> list[SolverSpec]:
    # Sized for the README's first run on 2 CPU cores: k=1 and short agent budgets. Real panels:
    # several models, k >= 4, more turns.
    return [
        SolverSpec(name="embedded", model="embedded", conditions=["closed_book", "search", "gold_evidence"], k=1),
        SolverSpec(name="bm25_reader", baseline="bm25_reader", conditions=["search"], k=1),
    ]


class PanelConfig(FrozenConfig):
    enabled: bool = Field(
        default=True, description="Run the solver panel and label difficulty; false publishes unlabeled items."
    )
    solvers: list[SolverSpec] = Field(default_factory=_default_solvers, description="At least two distinct solvers.")
    agent: AgentBudget = Field(
        default_factory=AgentBudget,
        description="Model solvers' turns, tokens, sampling, demonstrations and protocol; unset keys: 10 turns of "
        "512 tokens on served models, 2 of 64 (tags protocol) on the embedded one.",
    )
    answer_tokens: int = Field(default=24, ge=4, description="Tokens for a closed-book or gold-evidence answer.")
    f1_threshold: float = Field(
        default=0.8, gt=0.0, le=1.0, description="Token F1 at which an answer counts as correct."
    )
    retrieval_k: int | None = Field(
        default=None, ge=1, le=20, description="Documents a search returns to solvers; default: world.retrieval_k."
    )
    retriever: RetrieverChoice | None = Field(
        default=None,
        description="Model solvers search with this retriever (bm25, dense, hybrid or a /retrieve URL); "
        "default: world.retriever.",
    )
    gold_evidence: Literal["statements", "documents"] = Field(
        default="statements",
        description="What the gold_evidence condition shows: the evidence documents' sentences that state the "
        "item's edges, or the whole documents.",
    )
    judge_model: str | None = Field(
        default=None, description="A declared model that judges answers string matching rejects; none: matching only."
    )

    @model_validator(mode="before")
    @classmethod
    def _agent_keys(cls, values):
        return nest_agent_keys(values)

    @model_validator(mode="after")
    def _two_distinct(self) -> "PanelConfig":
        names = [solver.name for solver in self.solvers]
        if self.enabled and len(set(names)) < 2:
            raise ValueError(
                "the panel needs at least two solvers with distinct names (a model and a baseline will do)"
            )
        if len(set(names)) != len(names):
            raise ValueError(f"solver names must be unique: {names}")
        return self


class Panel:
    def __init__(
        self,
        solvers: list[tuple[Solver, int]],
        tools: SearchTools,
        f1_threshold: float = 0.8,
        judge: AnswerJudge | None = None,
    ):
        """`solvers`: (solver, k) pairs; `judge`: rechecks answers that string matching rejects."""
        self.solvers = solvers
        self.tools = tools
        self.f1_threshold = f1_threshold
        self.judge = judge

    async def attempt(
        self,
        items: list[Item],
        progress=None,
        on_gold: Callable[[list[SolverAttempt]], None] | None = None,
    ) -> tuple[list[SolverAttempt], list[Trajectory]]:
        """Every solver's k attempts under each of its conditions, all at once (an item's label waits
        for the slowest of them, not for their sum); recorded item by item, then by solver,
        condition and sample, so a batch's records are its items' records in order. `on_gold`
        receives the gold-evidence attempts (judged) as soon as they are in, before the searches
        end: what the reader check of a streaming run waits for."""
        runs: list[tuple[Solver, int, Condition]] = [
            (solver, k, condition) for solver, k in self.solvers for condition in solver.conditions
        ]
        if progress is not None:
            for solver, k, condition in runs:
                progress(f"panel: {solver.name} x {len(items)} items, {condition}, k={k} ...")
        solving = [asyncio.ensure_future(solver.solve(items, condition, k)) for solver, k, condition in runs]
        judged: dict[str, SolverAttempt] = {}
        gold = [index for index, (_, _, condition) in enumerate(runs) if condition == "gold_evidence"]
        if on_gold is not None and gold:
            await asyncio.gather(*(solving[index] for index in gold))
            records = self._records(items, [runs[index] for index in gold], [solving[index].result() for index in gold])
            gold_attempts = await self._judged([attempt for attempt, _ in records], items)
            judged = {attempt.id: attempt for attempt in gold_attempts}
            on_gold(gold_attempts)
        records = self._records(items, runs, list(await asyncio.gather(*solving)))
        trajectories = [trajectory for _, trajectory in records if trajectory is not None]
        pending = [attempt for attempt, _ in records if attempt.id not in judged]
        if self.judge is not None and progress is not None:
            progress(f"panel: {self.judge.model} judges the unmatched answers ...")
        judged.update({attempt.id: attempt for attempt in await self._judged(pending, items)})
        attempts = [judged[attempt.id] for attempt, _ in records]
        if self.judge is not None:
            verdicts = {attempt.trajectory_id: attempt.correct for attempt in attempts if attempt.trajectory_id}
            trajectories = [t.model_copy(update={"correct": verdicts.get(t.id, t.correct)}) for t in trajectories]
        return attempts, trajectories

    def _records(
        self, items: list[Item], runs: list[tuple[Solver, int, Condition]], outcomes: list[list[list[Outcome]]]
    ) -> list[tuple[SolverAttempt, Trajectory | None]]:
        """Attempts (and search trajectories) item by item, then in the order of `runs`, then by sample."""
        return [
            self._record(item, solver, condition, index, outcome)
            for position, item in enumerate(items)
            for (solver, _, condition), per_item in zip(runs, outcomes, strict=True)
            for index, outcome in enumerate(per_item[position])
        ]

    async def _judged(self, attempts: list[SolverAttempt], items: list[Item]) -> list[SolverAttempt]:
        """`attempts` with the answer judge's verdicts, if the panel has one."""
        if self.judge is None or not attempts:
            return attempts
        return await self.judge.rejudge({item.id: item for item in items}, attempts)

    def _record(self, item: Item, solver: Solver, condition: Condition, index: int, outcome: Outcome):
        match, score = match_answer(outcome.answer, item.answers, self.f1_threshold)
        attempt_id = content_hash(
            {"item": item.id, "solver": solver.name, "model": solver.model, "condition": condition, "sample": index}
        )
        trajectory, reading = None, None
        if outcome.messages:
            right = [*item.answers, *([outcome.answer] if match != "none" and outcome.answer else [])]
            reading = read_trajectory(outcome.messages, right)
            trajectory = Trajectory(
                id=attempt_id,
                item_id=item.id,
                role="solver",
                model=solver.model,
                messages=outcome.messages,
                tools=self.tools.schemas,
                sample_index=index,
                final_answer=outcome.answer,
                correct=match != "none",
                num_tool_calls=outcome.num_tool_calls,
                finish_reason=outcome.failure or "answered",
                usage=outcome.usage,
                step_labels=reading.step_labels,
                answer_seen_at=reading.answer_seen_at,
                metadata={
                    "condition": condition,
                    "solver": solver.name,
                    "malformed_turns": outcome.malformed_turns,
                    "reasoning_tokens": outcome.reasoning_tokens,
                    **self.tools.trajectory_metadata,
                    **({"context": outcome.context} if outcome.context else {}),
                },
            )
        attempt = SolverAttempt(
            id=attempt_id,
            item_id=item.id,
            solver=solver.name,
            model=solver.model,
            condition=condition,
            sample_index=index,
            answer=outcome.answer,
            correct=match != "none",
            score=score,
            match=match,
            num_tool_calls=outcome.num_tool_calls,
            answer_seen_at=reading.answer_seen_at if reading else None,
            trajectory_id=trajectory.id if trajectory else None,
            usage=outcome.usage,
            failure=outcome.failure,
        )
        return attempt, trajectory

"""Solver attempts and the difficulty labels derived from them."""

from typing import Literal

from pydantic import Field, model_validator

from synth.schemas.base import JsonDict, NonBlank, Record, SnakeCase

Condition = Literal["closed_book", "search", "gold_evidence"]
"""closed_book: question only; search: with the search tools; gold_evidence: with the evidence documents."""

DifficultyName = Literal["trivial", "easy", "medium", "hard", "unsolved"]


class Usage(Record):
    """Token counts of one or more model calls."""

    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class SolverAttempt(Record):
    """One sample of one solver on one item under one condition."""

    id: NonBlank
    item_id: NonBlank
    solver: NonBlank
    """Panel member name from the configuration (a model, or a declared model-free baseline)."""
    model: NonBlank
    condition: Condition
    sample_index: int = Field(ge=0)
    answer: str | None = None
    correct: bool
    score: float = Field(default=0.0, ge=0.0, le=1.0)
    """Token F1 against the best-matching accepted answer."""
    match: Literal["exact", "alias", "f1", "judge", "none"] = "none"
    num_tool_calls: int = Field(default=0, ge=0)
    answer_seen_at: int | None = Field(default=None, ge=1)
    """With search: the number of the call whose result first showed the answer (None: none did)."""
    trajectory_id: str | None = None
    usage: Usage = Field(default_factory=Usage)
    failure: SnakeCase | None = None
    """Why no answer was produced (e.g. turn_budget_exhausted), when none was."""

    @model_validator(mode="after")
    def _correct_needs_answer(self) -> "SolverAttempt":
        if self.correct and self.answer is None:
            raise ValueError("an attempt without an answer cannot be correct")
        return self


class PassRate(Record):
    """pass@k summary of one solver under one condition."""

    solver: NonBlank
    condition: Condition
    attempts: int = Field(ge=1)
    correct: int = Field(ge=0)

    @model_validator(mode="after")
    def _correct_le_attempts(self) -> "PassRate":
        if self.correct > self.attempts:
            raise ValueError(f"correct ({self.correct}) exceeds attempts ({self.attempts})")
        return self

    @property
    def rate(self) -> float:
        return self.correct / self.attempts


class DifficultyLabel(Record):
    """An item's difficulty, with the evidence and the versions needed to compare labels across runs."""

    item_id: NonBlank
    label: DifficultyName
    pass_rates: list[PassRate] = Field(default_factory=list)
    mean_tool_calls: float | None = None
    """Mean tool calls over correct attempts with search (None if none were correct): the calls to a
    correct answer."""
    min_tool_calls: int | None = None
    answer_hit_step: float | None = None
    """Median over correct search attempts of the call whose result first showed the answer
    (synth.filters.realized: realized difficulty; None when none saw it)."""
    tokens_to_correct: float | None = None
    """Mean prompt + completion tokens of the correct search attempts."""
    closed_book_rate: float | None = None
    """Share of closed-book attempts that were right: answering from memory (None: none ran)."""
    thresholds: SnakeCase
    """Name of the documented threshold set that produced the label."""
    solvers: dict[str, str] = Field(default_factory=dict)
    """Solver name -> model identity at labeling time."""
    judge: str | None = None
    metadata: JsonDict = Field(default_factory=dict)

"""The one protocol every backend implements."""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Literal

from synth.llm.reasoning import OFF, ReasoningPolicy
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure

BudgetProfile = Literal["served", "embedded"]


class LLMBackend(ABC):
    """Answers batches of chat requests. Callers hand over many requests at once (or call
    concurrently); the backend decides how to batch or pipeline them. A request that cannot be
    answered comes back as an LLMFailure in its slot, never as an exception for the whole batch."""

    reasoning: ReasoningPolicy = OFF
    """Whether the model reasons and how its requests make room for that (`synth.llm.reasoning`);
    set from the model's declaration."""
    budgets: BudgetProfile = "served"
    """Which default agent budgets its roles get (`synth.search.budget`): a real served model's, or
    the small ones the embedded CPU model can afford."""

    @property
    @abstractmethod
    def model_id(self) -> str:
        """Identity of the model for cache keys and lineage (name plus weights or endpoint model)."""

    @abstractmethod
    async def complete(self, requests: Sequence[ChatRequest]) -> list[ChatResponse | LLMFailure]:
        """One result per request, in order."""

    def native_tool_calls(self) -> bool:
        """Whether a request's `tools` reach the model in its own tool-call format (its chat
        template or the server's tool parser) and its calls come back as `tool_calls`. Agents
        fall back to describing the tools in text when not."""
        return False

    async def aclose(self) -> None:  # noqa: B027 (optional: most backends hold nothing to close)
        """Release engines, connections and threads."""

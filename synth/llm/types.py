"""What goes into a model call and what comes out, for every backend alike.

Messages and tool schemas are plain OpenAI-format dicts (that is what every backend and chat
template reads); the rest are frozen records so requests hash and cache by content.
"""

from typing import Any

from pydantic import Field

from synth.schemas import ToolCall, Usage
from synth.schemas.base import JsonDict, NonBlank, Record, SnakeCase


class SamplingParams(Record):
    temperature: float = Field(default=0.7, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(default=512, ge=1)
    n: int = Field(default=1, ge=1, description="Samples per request.")
    seed: int | None = Field(default=None, description="Per-request seed; distinct seeds give distinct cached samples.")
    stop: list[str] = Field(default_factory=list)


class ChatRequest(Record):
    """One chat completion request: the unit that is batched, cached and accounted."""

    messages: list[JsonDict] = Field(min_length=1)
    tools: list[JsonDict] | None = None
    sampling: SamplingParams = Field(default_factory=SamplingParams)
    json_schema: JsonDict | None = None
    """Constrain the reply to this JSON schema (guided decoding where the backend has it)."""
    stage: str = "default"
    """Which pipeline stage asks (for accounting only; not part of the cache key)."""

    def cache_payload(self, model_id: str) -> dict[str, Any]:
        """Everything that determines the answer, and nothing else."""
        return {
            "model": model_id,
            "messages": self.messages,
            "tools": self.tools,
            "sampling": self.sampling.model_dump(mode="json"),
            "json_schema": self.json_schema,
        }


class Completion(Record):
    """One sample."""

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    """stop, length, tool_calls, ... as the backend reports it."""


class ChatResponse(Record):
    completions: list[Completion] = Field(min_length=1)
    usage: Usage = Field(default_factory=Usage)
    model: NonBlank
    latency_s: float = Field(default=0.0, ge=0.0)
    cached: bool = False
    raw: JsonDict = Field(default_factory=dict)
    """The backend's raw response (or its essentials), kept so a parser fix never needs regeneration."""

    @property
    def text(self) -> str | None:
        return self.completions[0].text


class LLMFailure(Record):
    """A request that produced no usable response, and why. Never cached; never passed on as None."""

    reason: SnakeCase
    """e.g. http_429, timeout, malformed_response, context_too_long, budget_exceeded."""
    detail: str = ""
    attempts: int = Field(default=1, ge=1)
    raw: str | None = None

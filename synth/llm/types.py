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
    """One sample, read by `synth.llm.responses` from whatever shape the backend answered in."""

    text: str | None = None
    """The final content, without reasoning and without tool-call blocks."""
    reasoning: str | None = None
    """The model's reasoning, wherever the server put it (a field, `<think>` tags, harmony analysis)."""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    """stop, length, tool_calls, truncated_reasoning (cut off while reasoning), ... """


class ChatResponse(Record):
    completions: list[Completion] = Field(min_length=1)
    usage: Usage = Field(default_factory=Usage)
    model: NonBlank
    latency_s: float = Field(default=0.0, ge=0.0)
    cached: bool = False
    attempts: int = Field(default=1, ge=1)
    """Times the request went on the wire (1 plus retries)."""
    retries: dict[str, int] = Field(default_factory=dict)
    """Failed attempts before the answer, by reason (e.g. {"http_429": 2})."""
    raw: JsonDict = Field(default_factory=dict)
    """The backend's raw response (or its essentials), kept so a parser fix never needs regeneration."""
    reasoning_tokens: int = Field(default=0, ge=0)
    """Completion tokens spent reasoning, over all samples: the server's count
    (`usage.completion_tokens_details.reasoning_tokens`), else estimated (`reasoning_tokens_estimated`)."""
    reasoning_tokens_estimated: bool = False
    """True when the server did not count reasoning tokens and they were estimated as the reasoning's
    share of the completion's characters."""

    @property
    def text(self) -> str | None:
        return self.completions[0].text


class LLMFailure(Record):
    """A request that produced no usable response, and why. Never cached; never passed on as None."""

    reason: SnakeCase
    """e.g. http_429, timeout, malformed_response, context_too_long, budget_exceeded."""
    detail: str = ""
    attempts: int = Field(default=1, ge=0)
    """Times the request went on the wire; 0 when it never did (budget refused, circuit open)."""
    retries: dict[str, int] = Field(default_factory=dict)
    """Failed attempts that were retried, by reason."""
    raw: str | None = None
    endpoint: str | None = None
    """Where the last attempt went (a server URL), for the failure gate's message."""


REQUEST_FAILURES = frozenset({"context_too_long", "invalid_request", "http_400", "http_413", "http_422"})
"""Failures that belong to one request, not to the model server: a trajectory grown past the
context is an outcome of the attempt, and the server is fine."""


def is_model_failure(reason: str | None) -> bool:
    """Whether a failure reason (an LLMFailure's, or an attempt's finish reason) means the model
    server, engine or budget failed, so the attempt says nothing about the item."""
    if not reason:
        return False
    return reason in MODEL_FAILURES or (reason.startswith("http_") and reason not in REQUEST_FAILURES)


MODEL_FAILURES = frozenset(
    {
        "timeout",
        "connection_refused",
        "connection_dropped",
        "truncated_response",
        "malformed_response",
        "engine_error",
        "budget_exceeded",
        "circuit_open",
    }
)

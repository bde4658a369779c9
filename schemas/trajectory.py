"""Agent trajectories as OpenAI chat messages with tool calls.

Real-world quirks kept on purpose: tool-call `arguments` are JSON *strings* (possibly malformed,
which is what a distiller counts and corrects), `content` may be null on a tool-call message,
and call ids need not be unique within a trajectory.
"""

from typing import Literal

from pydantic import Field, model_validator

from synth.schemas.base import JsonDict, NonBlank, Record, SnakeCase
from synth.schemas.solving import Usage


class FunctionCall(Record):
    name: NonBlank
    arguments: str
    """JSON-encoded arguments, exactly as the model produced them."""


class ToolCall(Record):
    id: str
    type: Literal["function"] = "function"
    function: FunctionCall


class ChatMessage(Record):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
    """On a tool message: the id of the call it answers."""
    name: str | None = None
    reasoning_content: str | None = None
    """Separated reasoning, when the backend's reasoning parser split it from the content."""

    @model_validator(mode="after")
    def _check_shape(self) -> "ChatMessage":
        if self.tool_calls and self.role != "assistant":
            raise ValueError(f"only assistant messages carry tool_calls, not {self.role!r}")
        if self.role == "tool" and self.tool_call_id is None:
            raise ValueError("a tool message needs the tool_call_id of the call it answers")
        if self.content is None and not self.tool_calls:
            raise ValueError("content may be null only on an assistant message with tool_calls")
        return self


StepLabel = Literal["exploration", "verification", "redundant"]
"""What a call of the world's tools did (synth.solving.trajectory_reading states the rules)."""

PATH_TEACHER = "path-teacher"
"""The `model` of the path teacher's model-free demonstrations (synth.generators.path_teacher)."""


class Trajectory(Record):
    """One agent run on one item: the messages, the outcome, and why it was kept or rejected."""

    id: NonBlank
    item_id: NonBlank
    role: Literal["teacher", "solver", "proposer"]
    model: NonBlank
    messages: list[ChatMessage] = Field(min_length=1)
    tools: list[JsonDict] = Field(default_factory=list)
    """OpenAI function schemas the agent was offered."""
    sample_index: int = Field(default=0, ge=0)
    final_answer: str | None = None
    correct: bool | None = None
    num_tool_calls: int = Field(default=0, ge=0)
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    guided: bool = False
    """True when the agent saw the construction path as a hint (removed from the stored messages)."""
    selected: bool = False
    """The trajectory chosen for SFT export among the item's rollouts."""
    reject_reason: SnakeCase | None = None
    findings: list[SnakeCase] = Field(default_factory=list)
    """Checks beyond the answer that flag it (answer_not_grounded, unseen_entity, repeated_call,
    calls_after_answer_seen; synth.solving.trajectory_checks), whether or not one rejected it."""
    step_labels: list[StepLabel] = Field(default_factory=list)
    """One per call of the world's tools, in order (synth.solving.trajectory_reading states the rules)."""
    answer_seen_at: int | None = Field(default=None, ge=1)
    """The number (1-based) of the world call whose observation first showed the answer; None: none did."""
    metadata: JsonDict = Field(default_factory=dict)

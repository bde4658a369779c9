"""What one agent rollout may spend and how it samples: the same knobs for every agent synth runs.

The solver panel, the distillation teacher and the self-play proposer each hold an `AgentBudget`
(`panel.agent`, `distill.agent`, `proposer.agent`); `SearchAgent` takes it whole, so a knob has one
name and one default from the config down to the request.
"""

from typing import Literal

from pydantic import Field

from synth.config import FrozenConfig

Protocol = Literal["auto", "native", "json", "tags"]


class AgentBudget(FrozenConfig):
    max_turns: int = Field(default=4, ge=1, description="Model turns per rollout.")
    turn_tokens: int = Field(default=96, ge=8, description="Tokens per model turn.")
    context_tokens: int | None = Field(
        default=None, ge=128, description="A rollout stops once its prompt and completion pass this many tokens."
    )
    temperature: float = Field(default=0.7, ge=0.0, description="Sampling temperature.")
    demonstrations: bool = Field(
        default=True,
        description="Show a worked example before the task (small models copy the reply format from it; "
        "request only, never stored).",
    )
    protocol: Protocol = Field(
        default="auto",
        description="native: the backend's tool-call channel; tags: tools described in text, <tool_call>/<answer> "
        "tags; json: every reply one call held to the tools' JSON schemas; auto: native where the backend has "
        "it, else the role's fallback (tags for solvers and teachers, json for the proposer).",
    )

    def resolved_protocol(self, native_tool_calls: bool, fallback: Literal["tags", "json"] = "tags") -> str:
        """The protocol a rollout uses: `auto` is native where the backend has a tool-call channel."""
        if self.protocol != "auto":
            return self.protocol
        return "native" if native_tool_calls else fallback


def nest_agent_keys(values, renames: dict[str, str] | None = None):
    """A config's values with the agent's knobs given at its top level (`panel.max_turns=3`, as
    before they were grouped) moved under `agent` (`panel.agent.max_turns=3`)."""
    if not isinstance(values, dict):
        return values
    renames = {name: name for name in AgentBudget.model_fields} | (renames or {})
    moved = {renames[key]: values[key] for key in values if key in renames}
    if not moved:
        return values
    agent = values.get("agent", {})
    agent = {**moved, **(agent.model_dump() if isinstance(agent, AgentBudget) else agent)}
    return {**{key: value for key, value in values.items() if key not in renames}, "agent": agent}


PANEL_AGENT = AgentBudget(max_turns=2, turn_tokens=64, temperature=0.7, demonstrations=True, protocol="tags")
"""Model solvers: two short turns and the tags protocol by default, cheap enough for a CPU (raise
`panel.agent.max_turns` for real models)."""
TEACHER_AGENT = AgentBudget(max_turns=6, turn_tokens=256, context_tokens=4096, temperature=0.8, demonstrations=True)
"""Distillation teachers: room to search several times and answer."""
PROPOSER_AGENT = AgentBudget(max_turns=32, turn_tokens=96, temperature=0.8, demonstrations=True)
"""The self-play proposer: a round asks for a number of searches plus `proposer.extra_turns`; `max_turns` caps that."""

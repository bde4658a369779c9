"""What one agent rollout may spend and how it samples: the same knobs for every agent synth runs.

The solver panel, the distillation teacher and the self-play proposer each hold an `AgentBudget`
(`panel.agent`, `distill.agent`, `proposer.agent`). A key left unset takes the role's default for
the model the agent runs on (`RoleBudgets`): a served model (vLLM, an API) gets turns and tokens
enough for 4-hop chains, the bundled CPU model budgets it can afford. A model that reasons gets its
`reasoning_tokens` on top of every turn's tokens (`synth.llm.reasoning`), so `turn_tokens` is
what the model writes outside its thinking.
"""

from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from synth.config import FrozenConfig
from synth.search.context_policy import ContextPolicy

Protocol = Literal["auto", "native", "json", "tags"]


class AgentBudget(FrozenConfig):
    """An agent's knobs as configured; None takes the role's default for the model (see the README's
    table of role budgets)."""

    max_turns: int | None = Field(default=None, ge=1, description="Model turns per rollout.")
    turn_tokens: int | None = Field(
        default=None, ge=8, description="Tokens per model turn, besides the model's reasoning_tokens."
    )
    context_tokens: int | None = Field(
        default=None,
        ge=0,
        description="A rollout stops once its prompt and completion pass this many tokens (0: no limit).",
    )
    temperature: float | None = Field(default=None, ge=0.0, description="Sampling temperature.")
    demonstrations: bool | None = Field(
        default=None,
        description="Show a worked example before the task (small models copy the reply format from it; "
        "request only, never stored).",
    )
    protocol: Protocol | None = Field(
        default=None,
        description="native: the backend's tool-call channel; tags: tools described in text, <tool_call>/<answer> "
        "tags; json: every reply one call held to the tools' JSON schemas; auto: native where the backend has "
        "it, else the role's fallback (tags for solvers and teachers, json for the proposer).",
    )

    context: ContextPolicy | None = Field(
        default=None,
        description="What a long search sees of itself (synth.search.context_policy): none (everything), archive "
        "(tool results but the latest keep_results shown as stubs it can reopen with open), summarize (once a "
        "turn passes summarize_at tokens, the same model summarizes the work before the latest keep_results "
        "results); the stored trajectory keeps every message either way.",
    )
    keep_results: int | None = Field(
        default=None,
        ge=0,
        description="The latest tool results shown whole: archive 4 by default; summarize 0 (the summary replaces "
        "the whole history, as ReSum does; more keeps the latest results beside it, and `--context seen` exports "
        "then show those turns in two rows).",
    )
    summarize_at: int | None = Field(
        default=None,
        ge=1,
        description="summarize: the context tokens (prompt + completion) past which the next turn summarizes first "
        "(default: half of context_tokens, else 8,192).",
    )

    def kept_results(self) -> int:
        """The latest tool results a policy shows whole: `keep_results`, else 0 under summarize (a summary
        replaces the whole history, as ReSum does) and 4 otherwise."""
        if self.keep_results is not None:
            return self.keep_results
        return 0 if self.context == "summarize" else 4

    def summary_threshold(self) -> int:
        """The context tokens past which summarize folds the work in: `summarize_at`, else half of
        `context_tokens`, else 8,192."""
        return self.summarize_at or (self.context_tokens // 2 if self.context_tokens else 8192)

    def over(self, defaults: "AgentBudget") -> "AgentBudget":
        """This budget's set keys laid over `defaults`."""
        return defaults.model_copy(update=self.model_dump(exclude_none=True))

    def resolved_protocol(self, native_tool_calls: bool, fallback: Literal["tags", "json"] = "tags") -> str:
        """The protocol a rollout uses: `auto` is native where the backend has a tool-call channel."""
        if self.protocol not in (None, "auto"):
            return self.protocol
        return "native" if native_tool_calls else fallback


@dataclass(frozen=True)
class RoleBudgets:
    """A role's default budget per kind of model (`ModelSpec.budgets`)."""

    served: AgentBudget
    embedded: AgentBudget

    def resolve(self, configured: AgentBudget, client) -> AgentBudget:
        """`configured` with its unset keys filled in for `client`'s model."""
        return configured.over(getattr(self, client.budgets))


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
    agent = {**moved, **(agent.model_dump(exclude_none=True) if isinstance(agent, AgentBudget) else agent)}
    return {**{key: value for key, value in values.items() if key not in renames}, "agent": agent}


SERVED_CONTEXT = 32768
"""Longest trajectory a served model's rollout may grow to (reasoning kept in history counts)."""


def _defaults(turns: int, tokens: int, context: int, temperature: float, protocol: Protocol = "auto") -> AgentBudget:
    return AgentBudget(
        max_turns=turns,
        turn_tokens=tokens,
        context_tokens=context,
        temperature=temperature,
        demonstrations=True,
        protocol=protocol,
    )


PANEL_AGENT = RoleBudgets(served=_defaults(10, 512, SERVED_CONTEXT, 0.7), embedded=_defaults(2, 64, 0, 0.7, "tags"))
"""Model solvers. Served: a 4-hop chain takes 4 searches (often more: a miss, an `open`) and the
answer, so 10 turns; the embedded model gets two short turns, what 2 CPU cores afford per item."""
TEACHER_AGENT = RoleBudgets(served=_defaults(12, 1024, SERVED_CONTEXT, 0.8), embedded=_defaults(6, 256, 4096, 0.8))
"""Distillation teachers: room to search several times, think aloud and answer."""
EVAL_AGENT = RoleBudgets(served=_defaults(12, 1024, SERVED_CONTEXT, 0.0), embedded=_defaults(5, 96, 0, 0.0))
"""`synth eval`'s agent: a served model gets the teacher's room; the embedded model five short turns (a
3-hop chain's searches and the answer). Greedy, so pass@1 is reproducible; k > 1 samples at 0.7."""
PROPOSER_AGENT = RoleBudgets(served=_defaults(32, 512, SERVED_CONTEXT, 0.8), embedded=_defaults(32, 96, 0, 0.8))
"""The self-play proposer: a round asks for a number of searches plus `proposer.extra_turns`; `max_turns` caps that."""

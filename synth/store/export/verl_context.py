"""The context policy of a verl export: the one the version's teacher ran under (`distill.agent.context`),
applied in RL by the agent loop the export writes beside the data (synth/contract/verl_agent_loop.py),
so RL rollouts see their history as the SFT rollouts did.

A policy rewrites earlier turns, so a rollout is several training sequences (one per context
segment). verl's V1 trainer takes that from verl 0.9.1 on; older releases are refused here, with the
way out. TRL's tool loop keeps every message, so the TRL script runs without the policy (its notes say so).
"""

from dataclasses import dataclass
from pathlib import Path

import yaml

from synth.contract import portable
from synth.errors import ConfigError
from synth.search.budget import TEACHER_AGENT, AgentBudget
from synth.store.export import verl_command

AGENT_NAME = "synth_context_agent"
"""The agent loop's registered name, which the rows' `agent_name` selects."""
LOOP_MODULE = "synth_verl_agent_loop"
LOOP_CONFIG = "agent_loop.yaml"
FIRST_RELEASE = (0, 9, 1)


@dataclass(frozen=True)
class ExportContext:
    """The teacher's policy with its settings resolved as a served teacher resolves them."""

    policy: str
    keep_results: int
    summarize_at: int
    summary_tokens: int
    context_tokens: int
    max_turns: int


def teacher_context(config: dict) -> ExportContext:
    """The policy of a version's teacher (`distill.agent`; none when the version has no teacher)."""
    agent = ((config or {}).get("distill") or {}).get("agent") or {}
    known = {key: value for key, value in agent.items() if key in AgentBudget.model_fields}  # (older versions)
    budget = AgentBudget.model_validate(known).over(TEACHER_AGENT.served)
    return ExportContext(
        policy=budget.context or "none",
        keep_results=budget.kept_results(),
        summarize_at=budget.summary_threshold(),
        summary_tokens=budget.turn_tokens or 1024,
        context_tokens=budget.context_tokens or 0,
        max_turns=budget.max_turns or 12,
    )


def check_release(context: ExportContext, version: str) -> None:
    if context.policy != "none" and verl_command.release(version) < FIRST_RELEASE:
        raise ConfigError(
            f"the version's teacher ran under the {context.policy} context policy, which verl applies from 0.9.1 on "
            f"(one training sequence per context segment) and verl {version} cannot; export for --verl-version 0.9.1 "
            "or later"
        )


def sequence_lengths(context: ExportContext) -> tuple[int, int]:
    """verl's most prompt and response tokens per training sequence. Without a policy, verl's usual
    2,048 and 4,096. With one, a segment's prompt is the view, up to the teacher's context; under
    `summarize` a segment also grows until the summary threshold, so its response gets that room too
    (verl ends a rollout whose segment outgrows the response length)."""
    if context.policy == "none":
        return 2048, 4096
    budget = max(2048, context.context_tokens)
    return budget, max(4096, budget) if context.policy == "summarize" else 4096


def loop_files(context: ExportContext) -> dict[str, str]:
    """The agent loop and its config, by file name (none without a policy: verl's own tool agent runs)."""
    if context.policy == "none":
        return {}
    config = [
        {
            "name": AGENT_NAME,
            "_target_": f"{LOOP_MODULE}.SynthContextAgentLoop",
            "context": context.policy,
            "keep_results": context.keep_results,
            "summarize_at": context.summarize_at,
            "summary_tokens": context.summary_tokens,
        }
    ]
    header = (
        f"# verl agent loop written by `synth export --format verl`: the {context.policy} context policy the "
        "teacher ran under.\n"
    )
    return {
        LOOP_CONFIG: header + yaml.safe_dump(config, sort_keys=False, width=1000),
        f"{LOOP_MODULE}.py": (Path(portable.__file__).parent / "verl_agent_loop.py").read_text(encoding="utf-8"),
    }


def note(context: ExportContext) -> list[str]:
    if context.policy == "none":
        return []
    keep = f"the latest {context.keep_results} results shown whole"
    how = (
        f"old tool results archived to stubs ({keep})"
        if context.policy == "archive"
        else f"the earlier work summarized by the model past {context.summarize_at} tokens ({keep})"
    )
    return [
        f"context policy {context.policy} (the teacher's distill.agent.context): {how}; the rows run {LOOP_MODULE}."
        f"SynthContextAgentLoop ({LOOP_CONFIG}), which trains each context segment as its own sequence with the "
        "rollout's reward (verl's V1 trainer, trainer.use_v1=true); TRL's tool loop keeps every message, so the TRL "
        "script below runs without the policy"
    ]

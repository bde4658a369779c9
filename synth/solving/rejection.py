"""Rejection sampling of teacher trajectories: which rollouts are training data, and which one per
item goes to SFT.

A rollout is kept when it is well-formed and correct. Reasons, checked in this order (the first
that applies is recorded):

    model_failure          a model call failed (after the client's retries)
    truncated              a reply was cut off by the turn's token limit
    truncated_reasoning    ... while the model was still reasoning (raise the model's reasoning_tokens)
    token_budget_exhausted the trajectory outgrew `agent.context_tokens`
    turn_budget_exhausted  no answer within `agent.max_turns`
    evidence_not_surfaced  the path teacher's tools did not show a hop's evidence (teacher: path)
    unanswered_tool_call   a tool call without the tool message that answers it
    no_answer              the run ended without a final answer
    malformed_tool_call    more corrected malformed calls than `max_malformed`
    no_reasoning           `require_reasoning` is on and an assistant turn came without reasoning
    hint_leak              guided run whose actions use the hint (see synth.generators.guidance)
    too_few_tool_calls     fewer calls than `min_tool_calls` (a search agent must search)
    incorrect              the answer does not match (normalized exact, alias or token F1)
    answer_not_grounded, unseen_entity, repeated_call, calls_after_answer_seen
                           a correct rollout that is a poor demonstration (`checks`; the rules are in
                           synth.solving.trajectory_checks)

Every rollout also gets its step labels and the call that first showed the answer
(synth.solving.trajectory_reading), and every check's finding whether or not it decided.

Best-of-n (documented rule, `select`): among an item's kept rollouts, `fewest_tool_calls` picks the
one with the fewest calls (the shortest path to the answer, as ASearcher and WebSailor prefer),
then the fewest completion tokens, then the lowest sample index; `fewest_tokens` swaps the first
two keys. Kept rollouts that are not chosen stay unselected with no reason. Well-formed rollouts
rejected as incorrect or by a check beyond the answer are the DPO negatives of the chosen one (the
`dpo` export pairs them and writes the rejected side's reason).
"""

from collections import Counter
from statistics import mean
from typing import Literal

from pydantic import Field

from synth.config import FrozenConfig
from synth.contract import CONTRACTS, get_contract
from synth.contract.matching import match_answer
from synth.kg.name_mentions import WorldNames
from synth.schemas import ChatMessage, Item, Trajectory
from synth.solving.trajectory_checks import (
    TRAJECTORY_CHECKS,
    TrajectoryCheck,
    allows_closed_book,
    answer_names,
    findings,
)
from synth.solving.trajectory_reading import read_trajectory

PREFERENCE_NEGATIVES = ("incorrect", *TRAJECTORY_CHECKS)
"""Reasons whose rollouts followed the protocol: the rejected side of a DPO pair."""


class RejectionConfig(FrozenConfig):
    """Which teacher rollouts are training data and which one per item is chosen (the distill
    section's keys; its own match threshold, not the panel's)."""

    max_malformed: int = Field(default=0, ge=0, description="Corrected malformed calls a kept trajectory may contain.")
    require_reasoning: bool = Field(
        default=False,
        description="Keep only rollouts whose every assistant turn came with the model's reasoning (rejected as "
        "no_reasoning otherwise): SFT data that teaches thinking before each action.",
    )
    min_tool_calls: int = Field(
        default=1, ge=0, description="Tool calls a kept trajectory needs (0 keeps closed-book answers)."
    )
    select: Literal["fewest_tool_calls", "fewest_tokens"] = Field(
        default="fewest_tool_calls",
        description="Best-of-n rule among the correct, well-formed rollouts of an item (ties: fewer tokens, then "
        "lower sample index).",
    )
    checks: list[TrajectoryCheck] = Field(
        default_factory=lambda: list(TRAJECTORY_CHECKS),
        description="Checks beyond the answer that reject a correct rollout (synth.solving.trajectory_checks): "
        "answer_not_grounded, unseen_entity, repeated_call, calls_after_answer_seen; [] keeps every correct one. "
        "Each finding is stored on the trajectory either way.",
    )
    calls_after_answer_seen: int = Field(
        default=4,
        ge=0,
        description="World calls a kept rollout may make after the observation that first showed the answer.",
    )
    f1_threshold: float = Field(
        default=0.8,
        gt=0.0,
        le=1.0,
        description="Token F1 at which a teacher's answer counts as correct (after exact and alias matches).",
    )


RUN_ENDINGS = {
    "truncated": "truncated",
    "truncated_reasoning": "truncated_reasoning",
    "token_budget_exhausted": "token_budget_exhausted",
    "context_too_long": "token_budget_exhausted",
    "turn_budget_exhausted": "turn_budget_exhausted",
    "evidence_not_surfaced": "evidence_not_surfaced",
}


def unanswered_calls(messages: list[ChatMessage]) -> int:
    """Tool calls with no tool message answering them. Ids may repeat within a run, so each tool
    message answers the oldest open call with its id."""
    open_calls: Counter = Counter()
    for message in messages:
        for call in message.tool_calls or []:
            open_calls[call.id] += 1
        if message.role == "tool" and open_calls[message.tool_call_id] > 0:
            open_calls[message.tool_call_id] -= 1
    return sum(open_calls.values())


def reject_reason(
    trajectory: Trajectory, item: Item, config: RejectionConfig, f1_threshold: float | None = None
) -> str | None:
    """The first reason in the module's list that applies, or None (`f1_threshold`: the config's by default)."""
    f1_threshold = config.f1_threshold if f1_threshold is None else f1_threshold
    finish = trajectory.finish_reason or ""
    if finish not in ("answered", *RUN_ENDINGS):
        return "model_failure"
    if finish in RUN_ENDINGS:
        return RUN_ENDINGS[finish]
    if unanswered_calls(trajectory.messages):
        return "unanswered_tool_call"
    if trajectory.final_answer is None:
        return "no_answer"
    if trajectory.metadata.get("malformed_calls", 0) > config.max_malformed:
        return "malformed_tool_call"
    if config.require_reasoning and any(
        message.role == "assistant" and not message.reasoning_content for message in trajectory.messages
    ):
        return "no_reasoning"
    if trajectory.metadata.get("hint_leak"):
        return "hint_leak"
    if trajectory.num_tool_calls < config.min_tool_calls:
        return "too_few_tool_calls"
    if match_answer(trajectory.final_answer, item.answers, f1_threshold)[0] == "none":
        return "incorrect"
    return None


def _rank(trajectory: Trajectory, rule: str) -> tuple:
    calls, tokens = trajectory.num_tool_calls, trajectory.usage.completion_tokens
    return (
        (calls, tokens, trajectory.sample_index)
        if rule == "fewest_tool_calls"
        else (tokens, calls, trajectory.sample_index)
    )


def read_calls(
    trajectory: Trajectory, item: Item, correct: bool, names: WorldNames | None, config: RejectionConfig
) -> dict:
    """The trajectory's step labels, answer sighting and findings (fields of `Trajectory`)."""
    answers = answer_names(item, trajectory.final_answer, correct)
    contract = trajectory.metadata.get("contract")
    style = get_contract(contract).observation if contract in CONTRACTS else None
    reading = read_trajectory(trajectory.messages, answers, style)
    found = findings(
        trajectory.messages,
        trajectory.final_answer,
        reading,
        names,
        allows_closed_book(item, config.min_tool_calls),
        config.calls_after_answer_seen,
    )
    return {"step_labels": reading.step_labels, "answer_seen_at": reading.answer_seen_at, "findings": found}


def judge_rollouts(
    items: list[Item],
    trajectories: list[Trajectory],
    config: RejectionConfig,
    f1_threshold: float | None = None,
    names: WorldNames | None = None,
) -> list[Trajectory]:
    """Every rollout with `correct`, `reject_reason`, `selected`, its step labels and findings set
    (`names`: the world's entity names, for `unseen_entity`; None leaves that check out)."""
    f1_threshold = config.f1_threshold if f1_threshold is None else f1_threshold
    by_id = {item.id: item for item in items}
    judged = []
    for trajectory in trajectories:
        item = by_id[trajectory.item_id]
        reason = reject_reason(trajectory, item, config, f1_threshold)
        correct = match_answer(trajectory.final_answer, item.answers, f1_threshold)[0] != "none"
        read = read_calls(trajectory, item, correct, names, config)
        if reason is None:
            reason = next((finding for finding in read["findings"] if finding in config.checks), None)
        judged.append(
            trajectory.model_copy(update={"reject_reason": reason, "correct": correct, "selected": False, **read})
        )
    best: dict[str, Trajectory] = {}
    for trajectory in judged:
        if trajectory.reject_reason is None:
            current = best.get(trajectory.item_id)
            if current is None or _rank(trajectory, config.select) < _rank(current, config.select):
                best[trajectory.item_id] = trajectory
    chosen = {trajectory.id for trajectory in best.values()}
    return [t.model_copy(update={"selected": True}) if t.id in chosen else t for t in judged]


def distill_statistics(trajectories: list[Trajectory], items: int, config: RejectionConfig) -> dict:
    """The figures a version's summary shows for its teacher trajectories."""
    selected = [t for t in trajectories if t.selected]
    kept = [t for t in trajectories if t.reject_reason is None]
    chosen_items = {t.item_id for t in selected}
    pairs = sum(1 for t in trajectories if t.reject_reason in PREFERENCE_NEGATIVES and t.item_id in chosen_items)
    return {
        "rollouts": len(trajectories),
        "accepted": len(kept),
        "accept_rate": round(len(kept) / len(trajectories), 3) if trajectories else None,
        "items": items,
        "items_with_trajectory": len(chosen_items),
        "correct": sum(1 for t in trajectories if t.correct),
        "rejected": dict(Counter(t.reject_reason for t in trajectories if t.reject_reason).most_common()),
        "tool_calls_per_rollout": round(mean(t.num_tool_calls for t in trajectories), 2) if trajectories else None,
        "tool_calls_per_selected": round(mean(t.num_tool_calls for t in selected), 2) if selected else None,
        "malformed_calls": sum(t.metadata.get("malformed_calls", 0) for t in trajectories),
        "prompt_tokens": sum(t.usage.prompt_tokens for t in trajectories),
        "completion_tokens": sum(t.usage.completion_tokens for t in trajectories),
        "reasoning_tokens": sum(t.metadata.get("reasoning_tokens", 0) for t in trajectories),
        "turns_with_reasoning": _reasoning_share(trajectories),
        "findings": dict(Counter(finding for t in trajectories for finding in t.findings).most_common()),
        "step_labels": dict(Counter(label for t in trajectories for label in t.step_labels).most_common()),
        "dpo_pairs": pairs,
        "select": config.select,
    }


def _reasoning_share(trajectories: list[Trajectory]) -> str:
    """'n/m': assistant turns that came with the model's reasoning, of all assistant turns."""
    turns = [message for t in trajectories for message in t.messages if message.role == "assistant"]
    return f"{sum(bool(message.reasoning_content) for message in turns)}/{len(turns)}"

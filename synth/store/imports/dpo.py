"""Rows of the `dpo` export, TRL's conversational preference format:
`{"prompt": [...], "chosen": [...], "rejected": [...], "tools"?, "chosen_id"?, "rejected_id"?,
"rejected_reason"?}`.

TRL's standard (plain text) variant is read too: a string prompt is one user message, a string
chosen or rejected one assistant message. The chosen side is imported as the selected trajectory,
the rejected side as a trajectory rejected for its `rejected_reason` (a snake_case reason synth's
export wrote), else as "incorrect", paired with that chosen one.
"""

import json
import re
from typing import Any

from synth.schemas import ChatMessage
from synth.solving.trajectory_checks import TRAJECTORY_CHECKS
from synth.store.dialects import expand, unbatch
from synth.store.imports.base import Parsed, Rollout, first_user, require
from synth.store.imports.messages import chat_messages, tools_list


def _side(row: dict[str, Any], key: str, role: str) -> list[ChatMessage]:
    """Messages of one side: a list (or a JSON string of one), or plain text as one `role` message."""
    value = require(row, key)
    if isinstance(value, str):
        try:
            listed = json.loads(value)
        except json.JSONDecodeError:
            listed = None
        value = listed if isinstance(listed, list) else [{"role": role, "content": value}]
    return chat_messages(value, key)


def _conversation(prompt: list[ChatMessage], side: list[ChatMessage]) -> tuple[list[ChatMessage], list[dict]]:
    """Prompt and one side, with text calls in a known dialect and batched searches read as calls."""
    return expand(unbatch(prompt + side))


def _reason(value: Any) -> str:
    """The rejected side's reason as the row gives it (synth's own export), else "incorrect"."""
    if isinstance(value, str) and re.fullmatch(r"[a-z][a-z0-9_]*", value):
        return value
    return "incorrect"


def parse(row: dict[str, Any]) -> Parsed:
    prompt = _side(row, "prompt", "user")
    tools = tools_list(row.get("tools"))
    chosen_messages, chosen_tools = _conversation(prompt, _side(row, "chosen", "assistant"))
    rejected_messages, rejected_tools = _conversation(prompt, _side(row, "rejected", "assistant"))
    chosen = Rollout(chosen_messages, tools or chosen_tools, id=row.get("chosen_id"), correct=True)
    reason = _reason(row.get("rejected_reason"))
    rejected = Rollout(
        rejected_messages,
        tools or rejected_tools,
        id=row.get("rejected_id"),
        selected=False,
        reject_reason=reason,
        correct=reason in TRAJECTORY_CHECKS,  # those reject a right answer reached badly
        paired_with=0,
    )
    return Parsed(first_user(prompt), [chosen, rejected])

"""Rows of the `sft` export (OpenAI messages + tools), or any file in that common shape:
`{"messages": [...], "tools": [...] | "<json>", "trajectory_id"?: str}`."""

from typing import Any

from synth.store.imports.base import Parsed, Rollout, first_user, require
from synth.store.imports.messages import chat_messages, tools_list


def parse(row: dict[str, Any]) -> Parsed:
    messages = chat_messages(require(row, "messages"))
    rollout = Rollout(messages, tools_list(row.get("tools")), id=row.get("trajectory_id"))
    return Parsed(first_user(messages), [rollout])

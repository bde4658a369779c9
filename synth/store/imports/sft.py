"""Rows of the `sft` export (OpenAI messages + tools), or any file in that common shape:
`{"messages": [...], "tools": [...] | "<json>" (or the older `functions`), "trajectory_id"?: str}`;
tau-bench's result rows keep their messages under `traj`.

Assistant turns that write their calls as text in a known dialect (Search-R1 tags, R1-Searcher
tokens, ReAct) are read into tool calls (`synth.store.dialects`); a row of plain role/content
turns with Hermes/Qwen `<tool_call>` blocks and `<tool_response>` user turns (WebDancer, WebSailor)
is read as ChatML is."""

from typing import Any

from synth.schemas import ChatMessage
from synth.store.dialects import expand, unbatch
from synth.store.imports import chatml
from synth.store.imports.base import Parsed, Rollout, first_user, require
from synth.store.imports.messages import chat_messages, tools_list


def parse(row: dict[str, Any]) -> Parsed:
    key = "traj" if "messages" not in row and "traj" in row else "messages"
    messages = chat_messages(require(row, key), key)
    if _hermes_text(messages):
        messages, dialect_tools = chatml.convert([{"role": m.role, "content": m.content or ""} for m in messages])
        messages = unbatch(messages)
    else:
        messages, dialect_tools = expand(unbatch(messages))
    tools = tools_list(row.get("tools"))
    if not tools and row.get("functions") is not None:  # the pre-`tools` OpenAI shape: bare function schemas
        tools = [{"type": "function", "function": function} for function in tools_list(row["functions"])]
    rollout = Rollout(messages, tools or dialect_tools, id=row.get("trajectory_id"))
    return Parsed(first_user(messages), [rollout])


def _hermes_text(messages: list[ChatMessage]) -> bool:
    """Plain role/content turns whose assistant writes `<tool_call>` blocks: tool use as ChatML text."""
    if any(message.tool_calls or message.role == "tool" for message in messages):
        return False
    return any(message.role == "assistant" and "<tool_call>" in (message.content or "") for message in messages)

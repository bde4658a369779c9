"""Rows of the `sft` export (OpenAI messages + tools), or any file in that common shape:
`{"messages": [...], "tools": [...] | "<json>" (or the older `functions`), "trajectory_id"?: str}`;
tau-bench's result rows keep their messages under `traj`.

Assistant turns that write their calls as text in a known dialect (Search-R1 tags, R1-Searcher
tokens, ReAct) are read into tool calls (`synth.store.imports.dialects`)."""

from typing import Any

from synth.store.imports.base import Parsed, Rollout, first_user, require
from synth.store.imports.dialects import expand, unbatch
from synth.store.imports.messages import chat_messages, tools_list


def parse(row: dict[str, Any]) -> Parsed:
    key = "traj" if "messages" not in row and "traj" in row else "messages"
    messages, dialect_tools = expand(unbatch(chat_messages(require(row, key), key)))
    tools = tools_list(row.get("tools"))
    if not tools and row.get("functions") is not None:  # the pre-`tools` OpenAI shape: bare function schemas
        tools = [{"type": "function", "function": function} for function in tools_list(row["functions"])]
    rollout = Rollout(messages, tools or dialect_tools, id=row.get("trajectory_id"))
    return Parsed(first_user(messages), [rollout])

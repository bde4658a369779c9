"""Tool calls written as text by models without a native tool-call channel (Hermes / Qwen / ChatML style):

    <tool_call>{"name": "search", "arguments": {"query": "..."}}</tool_call>

Parsed into OpenAI-shaped ToolCalls (arguments re-encoded as a JSON string). Blocks whose JSON does
not parse stay in the text, where the agent loop sees them and can answer with a correction.
"""

import json
import re

from synth.schemas import FunctionCall, ToolCall

_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)


def parse_tool_calls(text: str, id_prefix: str | None = "call") -> tuple[str, list[ToolCall]]:
    """(text with the parsed blocks removed, the calls in order); ids `{id_prefix}_{index}`, or
    empty with `id_prefix=None` (the caller numbers them)."""
    calls: list[ToolCall] = []

    def take(match: re.Match) -> str:
        try:
            payload = json.loads(match.group(1))
        except json.JSONDecodeError:
            return match.group(0)
        if not isinstance(payload, dict) or not isinstance(payload.get("name"), str) or not payload["name"].strip():
            return match.group(0)
        arguments = payload.get("arguments", payload.get("parameters", {}))
        encoded = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        calls.append(
            ToolCall(
                id=f"{id_prefix}_{len(calls)}" if id_prefix else "",
                function=FunctionCall(name=payload["name"], arguments=encoded),
            )
        )
        return ""

    remaining = _BLOCK.sub(take, text)
    return remaining.strip(), calls

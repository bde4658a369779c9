"""Rows of the `sft-chatml` export (or Qwen/Hermes-style chat): role/content messages with the
tools in a "# Tools" section of the system message, calls as <tool_call> blocks at the end of
assistant turns and results as <tool_response> blocks in user turns.

Read back into OpenAI messages: the section becomes `tools` (the system text before it stays the
system message), each block a tool call or tool message. ChatML has no call ids, so calls get
`call_N` in order and each response answers the call at its position. Arguments are kept as
written: an object's text verbatim, a JSON string literal as the (malformed) string it holds; a
block whose JSON is not `{"name": ..., "arguments": ...}` stays text.
"""

import json
import re
from typing import Any

from synth.schemas import ChatMessage, FunctionCall, ToolCall
from synth.store.dialects import unbatch
from synth.store.export.chatml import TOOLS_HEADING
from synth.store.imports.base import Parsed, Rollout, RowError, first_user, require
from synth.store.imports.messages import decoded, tools_list

_CALL = re.compile(r"<tool_call>\n?(.*?)\n?</tool_call>", re.DOTALL)
_RESPONSE = re.compile(r"<tool_response>\n?(.*?)\n?</tool_response>", re.DOTALL)
_TOOLS = re.compile(r"<tools>\n(.*?)\n</tools>", re.DOTALL)
_WRITTEN = re.compile(r'\{"name": ("(?:[^"\\]|\\.)*"), "arguments": (.*)\}', re.DOTALL)


def split_tools(system: str) -> tuple[str, list[dict] | None]:
    """(text without the tools section, the tools) — or (text, None) without a section."""
    start = 0 if system.startswith(TOOLS_HEADING) else system.rfind("\n\n" + TOOLS_HEADING)
    found = _TOOLS.search(system, max(start, 0)) if start >= 0 else None
    if found is None:
        return system, None
    try:
        tools = [json.loads(line) for line in found.group(1).splitlines() if line.strip()]
    except json.JSONDecodeError as error:
        raise RowError(f"a line between <tools> and </tools> is not valid JSON ({error.msg})") from None
    return system[:start], tools_list(tools)


def user_tools(text: str) -> tuple[str, list[dict] | None]:
    """A user turn holding a tool specification: (the turn without it, the tools), or (text, None).
    The instructions after `</tools>` (paragraphs about <tool_call>/<tool_response>) go with it."""
    before, tools = split_tools(text)
    if tools is None:
        return text, None
    after = text[text.index("</tools>", len(before)) + len("</tools>") :]
    paragraphs = [paragraph for paragraph in after.split("\n\n") if paragraph.strip()]
    while paragraphs and re.search(r"tool_call|tool_response|function", paragraphs[0]):
        paragraphs.pop(0)
    return "\n\n".join(part.strip() for part in [before, *paragraphs] if part.strip()), tools


def parse_call(body: str, call_id: str) -> ToolCall | None:
    written = _WRITTEN.fullmatch(body)
    if written:
        name, arguments = json.loads(written.group(1)), written.group(2)
        try:
            value = json.loads(arguments)
        except json.JSONDecodeError:
            value = None  # malformed as the model wrote it: kept verbatim
        if isinstance(value, str):
            arguments = value
    else:
        try:
            payload = json.loads(body)
        except json.JSONDecodeError:
            return None
        if not isinstance(payload, dict):
            return None
        name = payload.get("name")
        value = payload.get("arguments", payload.get("parameters", {}))
        arguments = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    if not isinstance(name, str) or not name.strip():
        return None
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def assistant_message(text: str, next_id: int) -> ChatMessage:
    calls, spans = [], []
    for match in _CALL.finditer(text):
        call = parse_call(match.group(1), f"call_{next_id + len(calls)}")
        if call is not None:
            calls.append(call)
            spans.append(match.span())
    if not calls:
        return ChatMessage(role="assistant", content=text)
    content = text[: spans[0][0]].removesuffix("\n")
    rest = "".join(text[end:start] for (_, end), (start, _) in zip(spans, spans[1:] + [(len(text), 0)]))
    if rest.strip():
        content = f"{content}\n{rest.strip()}" if content else rest.strip()
    return ChatMessage(role="assistant", content=content or None, tool_calls=calls)


def tool_responses(text: str) -> list[str] | None:
    """The results of a user turn made only of <tool_response> blocks, else None."""
    found = list(_RESPONSE.finditer(text))
    if not found or _RESPONSE.sub("", text).strip():
        return None
    return [match.group(1) for match in found]


def convert(raw: list[Any]) -> tuple[list[ChatMessage], list[dict]]:
    messages: list[ChatMessage] = []
    tools: list[dict] = []
    pending: list[str] = []
    calls = 0
    for index, entry in enumerate(raw):
        if (
            not isinstance(entry, dict)
            or entry.get("role") not in ("system", "user", "assistant")
            or not isinstance(entry.get("content"), str)
        ):
            raise RowError(f"messages[{index}] is not a ChatML message {{role: system|user|assistant, content: str}}")
        role, content = entry["role"], entry["content"]
        if role == "system" and index == 0:
            content, found = split_tools(content)
            tools = found if found is not None else tools
            if content or found is None:
                messages.append(ChatMessage(role="system", content=content))
        elif role == "assistant":
            message = assistant_message(content, calls)
            pending = [call.id for call in message.tool_calls or []]
            calls += len(pending)
            messages.append(message)
        elif role == "user" and not tools and not any(m.role == "user" for m in messages):
            # a tool specification in the first user turn (some ChatML sets put it there): tools, not question
            question, found = user_tools(content)
            tools = found if found is not None else tools
            messages.append(ChatMessage(role="user", content=question))
        elif role == "user" and (results := tool_responses(content)) is not None:
            for number, result in enumerate(results):
                call_id = pending[number] if number < len(pending) else f"response_{len(messages)}"
                messages.append(ChatMessage(role="tool", tool_call_id=call_id, content=result))
            pending = []
        else:
            messages.append(ChatMessage(role=role, content=content))
    return messages, tools


def parse(row: dict[str, Any]) -> Parsed:
    raw = decoded(require(row, "messages"), "messages")
    if not isinstance(raw, list) or not raw:
        raise RowError("`messages` must be a non-empty list of messages")
    messages, tools = convert(raw)
    messages = unbatch(messages)
    if not tools and row.get("tools") is not None:
        tools = tools_list(row["tools"])
    return Parsed(first_user(messages), [Rollout(messages, tools, id=row.get("trajectory_id"))])

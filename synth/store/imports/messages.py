"""OpenAI chat messages and tool lists as files in the wild hold them, made into synth's records.

Accepted variants: messages and tools as lists or as JSON strings; tool-call arguments as a JSON
string (kept verbatim, even malformed, since that is what the model wrote) or as an object
(encoded once); content as a string, null (on tool-call turns) or a list of text parts; keys with
null values (Parquet and `datasets` pad structs with them) are dropped.
"""

import json
from typing import Any

from pydantic import ValidationError

from synth.schemas import ChatMessage, FunctionCall, ToolCall
from synth.store.imports.base import RowError

_FIELDS = set(ChatMessage.model_fields)


def decoded(value: Any, what: str) -> Any:
    """`value`, or what it holds when it is a JSON string (a column written as text)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as error:
        raise RowError(f"`{what}` is a string but not valid JSON ({error.msg} at character {error.pos})") from None


def tools_list(value: Any) -> list[dict]:
    tools = decoded(value, "tools") if value is not None else []
    if not isinstance(tools, list) or not all(isinstance(tool, dict) for tool in tools):
        raise RowError("`tools` must be a list of function schemas (objects)")
    return tools


def chat_messages(value: Any, what: str = "messages") -> list[ChatMessage]:
    messages = decoded(value, what)
    if not isinstance(messages, list) or not messages:
        raise RowError(f"`{what}` must be a non-empty list of messages")
    return [chat_message(message, f"{what}[{index}]") for index, message in enumerate(messages)]


def chat_message(raw: Any, where: str) -> ChatMessage:
    if not isinstance(raw, dict):
        raise RowError(f"{where} is not an object")
    fields = {key: value for key, value in raw.items() if value is not None}
    unknown = sorted(set(fields) - _FIELDS)
    if unknown:
        raise RowError(f"{where} has fields synth does not store: {', '.join(unknown)}")
    fields["content"] = _text(raw.get("content"), where)
    if "tool_calls" in fields:
        calls = fields["tool_calls"]
        if not isinstance(calls, list):
            raise RowError(f"{where}.tool_calls is not a list")
        fields["tool_calls"] = [tool_call(call, f"{where}.tool_calls[{index}]") for index, call in enumerate(calls)]
    try:
        return ChatMessage(**fields)
    except ValidationError as error:
        raise RowError(f"{where}: {first_problem(error)}") from None


def tool_call(raw: Any, where: str) -> ToolCall:
    if not isinstance(raw, dict):
        raise RowError(f"{where} is not an object")
    function = raw.get("function", raw)
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise RowError(f"{where} has no function name")
    arguments = function.get("arguments")
    if arguments is None:
        arguments = "{}"
    elif not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    call_id = raw.get("id")
    if not isinstance(call_id, str):
        raise RowError(f"{where} has no string `id`")
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def _text(content: Any, where: str) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(part, dict) and isinstance(part.get("text"), str) for part in content
    ):
        return "".join(part["text"] for part in content)
    raise RowError(f"{where}.content must be a string, null or a list of text parts")


def first_problem(error: ValidationError) -> str:
    problem = error.errors()[0]
    location = ".".join(str(part) for part in problem["loc"])
    message = problem["msg"].removeprefix("Value error, ")
    return f"{location}: {message}" if location else message

"""Agent dialects written as text, read into OpenAI tool calls and tool messages.

A completion (or an assistant message) in one of these is cut at each call + observation pair:

- Search-R1:   `<search> Q </search>` then `<information>R</information>`
- R1-Searcher: `<|begin_of_query|>Q<|end_of_query|>` then `<|begin_of_documents|>R<|end_of_documents|>`
- ReAct:       `Action: search[Q]` (or `Search[Q]`, `lookup[K]`, `open[ID]`) then `Observation: R`

Hermes/Qwen `<tool_call>` blocks with `<tool_response>` user turns are read by the ChatML parser, and
OpenAI `tool_calls` by the message reader. A text that looks like tool use in none of these
(`looks_like_tool_use`) is reported by the importer, and refused with `--strict`, so no call is
ever lost without a word.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from synth.contract.contracts import SEARCHR1
from synth.schemas import ChatMessage, FunctionCall, ToolCall


@dataclass(frozen=True)
class Dialect:
    name: str
    step: re.Pattern
    """One call and its observation; the last group is the observation."""
    call: Callable[[re.Match], tuple[str, dict]]
    """(tool name, arguments) of a step."""
    tools: tuple[dict, ...]


def _query(text: str) -> str:
    """The query inside the tags, without the one space on each side Search-R1 writes."""
    return text.removeprefix(" ").removesuffix(" ")


_REACT_TOOLS = {"search": ("search", "query"), "lookup": ("lookup", "keyword"), "open": ("open", "doc_id")}
_LOOKUP = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Find the next sentence with a keyword in the page opened last (ReAct).",
        "parameters": {"type": "object", "properties": {"keyword": {"type": "string"}}, "required": ["keyword"]},
    },
}
_OPEN = {
    "type": "function",
    "function": {
        "name": "open",
        "description": "Open a document by id.",
        "parameters": {"type": "object", "properties": {"doc_id": {"type": "string"}}, "required": ["doc_id"]},
    },
}


def _react_call(match: re.Match) -> tuple[str, dict]:
    name, argument = _REACT_TOOLS[match.group(1).lower()]
    return name, {argument: match.group(2).strip()}


DIALECTS = (
    Dialect(
        "search-r1",
        re.compile(r"<search>(.*?)</search>\s*<information>(.*?)</information>\s*", re.DOTALL),
        lambda match: ("search", {"query": _query(match.group(1))}),
        (SEARCHR1.tool("search"),),
    ),
    Dialect(
        "r1-searcher",
        re.compile(
            r"<\|begin_of_query\|>(.*?)<\|end_of_query\|>\s*<\|begin_of_documents\|>(.*?)<\|end_of_documents\|>\s*",
            re.DOTALL,
        ),
        lambda match: ("search", {"query": match.group(1).strip()}),
        (SEARCHR1.tool("search"),),
    ),
    Dialect(
        "react",
        re.compile(
            r"Action(?: \d+)?:\s*(search|lookup|open)\[(.*?)\]\s*\n\s*Observation(?: \d+)?:\s*(.*?)\s*"
            r"(?=\n\s*(?:Thought|Action|Final Answer|Answer)(?: \d+)?:|\Z)",
            re.DOTALL | re.IGNORECASE,
        ),
        _react_call,
        (SEARCHR1.tool("search"), _LOOKUP, _OPEN),
    ),
)

_MARKERS = re.compile(
    r"<search>|<information>|<\|begin_of_query\|>|<\|begin_of_documents\|>|^\s*Action(?: \d+)?:|"
    r"<tool_call>|<tool_response>|<function_call>|\[TOOL_CALLS\]|\"name\":\s*\"(?:search|open)\"",
    re.MULTILINE | re.IGNORECASE,
)


def looks_like_tool_use(text: str | None) -> str | None:
    """The first sign of tool use in `text` (a tag, an `Action:` line, a call as JSON), or None."""
    found = _MARKERS.search(text or "")
    return found.group(0).strip() if found else None


def split(text: str, first_id: int = 0) -> tuple[Dialect, list[ChatMessage]] | None:
    """The turns of a text in the first dialect that has a step in it, else None: the text before
    each step as an assistant message with its call, the observation as the tool message, the rest
    as the last assistant message."""
    for dialect in DIALECTS:
        steps = list(dialect.step.finditer(text))
        if steps:
            return dialect, _turns(text, steps, dialect, first_id)
    return None


def _turns(text: str, steps: list[re.Match], dialect: Dialect, first_id: int) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    position = 0
    for number, step in enumerate(steps, start=first_id):
        before = text[position : step.start()]
        content = before[:-1] if before.endswith("\n") else before
        name, arguments = dialect.call(step)
        call = ToolCall(
            id=f"call_{number}", function=FunctionCall(name=name, arguments=json.dumps(arguments, ensure_ascii=False))
        )
        messages.append(ChatMessage(role="assistant", content=content or None, tool_calls=[call]))
        messages.append(ChatMessage(role="tool", tool_call_id=call.id, content=step.group(step.re.groups)))
        position = step.end()
    if text[position:]:
        messages.append(ChatMessage(role="assistant", content=text[position:]))
    return messages


def expand(messages: list[ChatMessage]) -> tuple[list[ChatMessage], list[dict]]:
    """OpenAI messages whose assistant turns hold text calls in a dialect, with those calls made
    tool calls and tool messages; and the dialect's tools (none when nothing was expanded)."""
    expanded: list[ChatMessage] = []
    tools: dict[str, dict] = {}
    calls = sum(len(message.tool_calls or []) for message in messages)
    for message in messages:
        found = split(message.content or "", calls) if message.role == "assistant" and not message.tool_calls else None
        if found is None:
            expanded.append(message)
            continue
        dialect, turns = found
        calls += sum(len(turn.tool_calls or []) for turn in turns)
        expanded += turns
        tools.update({tool["function"]["name"]: tool for tool in dialect.tools})
    return expanded, list(tools.values())


_SEPARATOR = re.compile(r"\n\s*={3,}\s*\n")
"""Between the results of the queries of one batched search (WebDancer's tool output)."""


def unbatch(messages: list[ChatMessage]) -> list[ChatMessage]:
    """A `search` call with a list of queries (`{"query": ["a", "b"]}`, as WebDancer writes) becomes one
    call per query when its result splits into as many parts (at `=======` lines); otherwise it stays
    one declared batch call, which the formats that hold one query per search name when they skip it."""
    out: list[ChatMessage] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        results = []
        while index < len(messages) and messages[index].role == "tool":
            results.append(messages[index])
            index += 1
        if message.role != "assistant" or not any(_batched(call) for call in message.tool_calls or []):
            out += [message, *results]  # untouched: nothing batched (call ids may repeat; order is kept)
            continue
        calls, answered, unused = [], [], list(results)
        for call in message.tool_calls or []:
            result = next((r for r in unused if r.tool_call_id == call.id), None)
            if result is not None:
                unused.remove(result)
            queries = _batched(call)
            parts = _SEPARATOR.split(result.content or "") if result is not None and queries else []
            if queries and len(parts) == len(queries):
                for number, (query, part) in enumerate(zip(queries, parts)):
                    one = ToolCall(
                        id=f"{call.id}_{number}",
                        function=FunctionCall(
                            name=call.function.name, arguments=json.dumps({"query": query}, ensure_ascii=False)
                        ),
                    )
                    calls.append(one)
                    answered.append(ChatMessage(role="tool", tool_call_id=one.id, content=part.strip()))
            else:
                calls.append(call)
                answered += [result] if result is not None else []
        out += [message.model_copy(update={"tool_calls": calls}), *answered, *unused]
    return out


def _batched(call: ToolCall) -> list[str] | None:
    if call.function.name != "search":
        return None
    try:
        arguments = json.loads(call.function.arguments)
    except json.JSONDecodeError:
        return None
    queries = arguments.get("query") if isinstance(arguments, dict) else None
    if isinstance(queries, list) and len(queries) > 1 and all(isinstance(query, str) for query in queries):
        return queries
    return None

"""Rows of the `searchr1-sft` export (or Search-R1 rollouts saved as chat): a user prompt and one
assistant completion in Search-R1's tags.

The completion is cut at each `<search> Q </search>` + `<information>R</information>` pair into
OpenAI turns: the text before it is the assistant content, the search a `search` tool call
(`call_N`), the information its tool message; the text after the last one (thoughts and
`<answer>`) is the final assistant message. The question is read out of the prompt (synth's
Search-R1 prompt, else the text after its last "Question:", else the whole prompt); the prompt
itself stays the user message, as the model saw it.
"""

import json
import re
from typing import Any

from synth.contract.contracts import SEARCHR1
from synth.schemas import ChatMessage, FunctionCall, ToolCall
from synth.store.export.prompts import SEARCH_R1_PROMPT
from synth.store.imports.base import Parsed, Rollout, RowError, require
from synth.store.imports.messages import decoded

_STEP = re.compile(r"<search>(.*?)</search>\s*<information>(.*?)</information>\s*", re.DOTALL)


def question_in(prompt: str, template: str = SEARCH_R1_PROMPT) -> str:
    prefix, _, suffix = template.partition("{question}")
    if prompt.startswith(prefix) and prompt.endswith(suffix) and len(prompt) > len(prefix) + len(suffix):
        return prompt[len(prefix) : len(prompt) - len(suffix)]
    _, marker, after = prompt.rpartition("Question:")
    return after.strip() if marker and after.strip() else prompt


def _query(text: str) -> str:
    """The query inside `<search> Q </search>`, without the one space on each side the tags get."""
    return text.removeprefix(" ").removesuffix(" ")


def turns(completion: str) -> list[ChatMessage]:
    messages: list[ChatMessage] = []
    position = 0
    for number, step in enumerate(_STEP.finditer(completion)):
        before = completion[position : step.start()]
        content = before[:-1] if before.endswith("\n") else before
        arguments = json.dumps({"query": _query(step.group(1))}, ensure_ascii=False)
        call = ToolCall(id=f"call_{number}", function=FunctionCall(name="search", arguments=arguments))
        messages.append(ChatMessage(role="assistant", content=content or None, tool_calls=[call]))
        messages.append(ChatMessage(role="tool", tool_call_id=call.id, content=step.group(2)))
        position = step.end()
    if completion[position:]:
        messages.append(ChatMessage(role="assistant", content=completion[position:]))
    return messages


def parse(row: dict[str, Any]) -> Parsed:
    raw = decoded(require(row, "messages"), "messages")
    if not isinstance(raw, list):
        raise RowError("`messages` must be a list of messages")
    text = {entry.get("role"): entry.get("content") for entry in reversed(raw) if isinstance(entry, dict)}
    prompt, completion = text.get("user"), text.get("assistant")
    if not isinstance(prompt, str) or not prompt.strip() or not isinstance(completion, str) or not completion:
        raise RowError("a Search-R1 row needs a user message (the prompt) and an assistant message (the completion)")
    messages = [ChatMessage(role="user", content=prompt), *turns(completion)]
    return Parsed(question_in(prompt), [Rollout(messages, [SEARCHR1.tool("search")], id=row.get("trajectory_id"))])

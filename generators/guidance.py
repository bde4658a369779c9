"""Guided distillation: the teacher sees the item's construction path as a hint, and the stored
trajectory must not depend on it (MedResearcher-R1's trick for questions too hard to solve blind).

The hint goes into the system prompt of the requests only, so the stored messages never hold it.
What can still depend on it is what the teacher wrote: a thought or a search query that names a
hidden entity (an intermediate of the path, or the answer) before any tool result showed that
name. Leaking thoughts are rewritten by the teacher without the names, then cut down to their
other sentences if the rewrite still leaks; a leaking action (query, opened id, final answer)
cannot be rewritten without changing the run, so such a trajectory is rejected as `hint_leak`.
"""

import re
from dataclasses import dataclass

from synth.contract.matching import mentions
from synth.llm.client import LLMClient
from synth.llm.types import ChatRequest, ChatResponse, SamplingParams
from synth.schemas import ChatMessage, Item

_ANSWER_TAG = re.compile(r"<answer>.*?</answer>", re.DOTALL | re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

REWRITE_PROMPT = (
    "Rewrite the reasoning below so that it does not mention {names}: it may only use what the "
    "question and the search results so far say. Keep any <answer> tag exactly as it is. Reply with the rewritten "
    "reasoning only.\n\nReasoning:\n{thought}"
)


@dataclass(frozen=True)
class Guidance:
    hint: str
    """Text added to the teacher's system prompt."""
    hidden: tuple[str, ...]
    """Names the stored trajectory may use only after a tool result (or the question) shows them."""


def path_guidance(item: Item, name) -> Guidance | None:
    """The construction path as a hint, with every path entity the question does not name hidden.
    `name(entity_id)` gives an entity's surface form. None for items without a path."""
    if not item.path:
        return None
    lines = []
    for hop in item.path:
        source, target = (hop.head, hop.tail) if hop.direction == "forward" else (hop.tail, hop.head)
        lines.append(f"- {name(source)} --[{hop.relation}]--> {name(target)}")
    hint = (
        "Hint (for you only, never mention that you have it): the answer is reached by this chain of facts; "
        "verify each step with the search tool before you answer.\n" + "\n".join(lines)
    )
    names = {name(entity) for hop in item.path for entity in (hop.head, hop.tail)} | set(item.answers)
    return Guidance(hint, tuple(sorted(n for n in names if n and not mentions(item.question, n))))


def _thought(message: ChatMessage) -> str:
    return _ANSWER_TAG.sub("", " ".join(filter(None, [message.content, message.reasoning_content])))


def _action(message: ChatMessage) -> str:
    calls = " ".join(call.function.arguments for call in message.tool_calls or [])
    return " ".join(_ANSWER_TAG.findall(message.content or "")) + " " + calls


def leaks(messages: list[ChatMessage], hidden: tuple[str, ...]) -> list[tuple[int, str, str]]:
    """(message index, "thought" or "action", name) for each hidden name an assistant message uses
    before the question or a tool result showed it."""
    shown: set[str] = set()
    found = []
    for index, message in enumerate(messages):
        if message.role in ("user", "tool"):
            shown |= {name for name in hidden if mentions(message.content or "", name)}
            continue
        if message.role != "assistant":
            continue
        for kind, text in (("thought", _thought(message)), ("action", _action(message))):
            found += [(index, kind, name) for name in hidden if name not in shown and mentions(text, name)]
    return found


def _drop_sentences(text: str | None, names: list[str]) -> str | None:
    if text is None:
        return None
    kept = [part for part in _SENTENCE.split(text) if part.strip() and not any(mentions(part, name) for name in names)]
    return " ".join(kept) or None


async def remove_hint_dependence(
    messages: list[ChatMessage], guidance: Guidance, client: LLMClient, seed: int
) -> tuple[list[ChatMessage], int, bool]:
    """(messages with leaking thoughts rewritten, rewrites made, whether an action still leaks)."""
    thoughts: dict[int, list[str]] = {}
    for index, kind, name in leaks(messages, guidance.hidden):
        if kind == "thought":
            thoughts.setdefault(index, []).append(name)
    messages = list(messages)
    to_model = [index for index, names in thoughts.items() if _content_leaks(messages[index], names)]
    requests = [_rewrite_request(messages[index], thoughts[index], seed + index) for index in to_model]
    results = dict(zip(to_model, await client.complete(requests))) if requests else {}
    for index, names in thoughts.items():
        messages[index] = _rewritten(messages[index], names, results.get(index))
    remaining = leaks(messages, guidance.hidden)
    return messages, len(thoughts), bool(remaining)


def _content_leaks(message: ChatMessage, names: list[str]) -> bool:
    return any(mentions(_ANSWER_TAG.sub("", message.content or ""), name) for name in names)


def _rewrite_request(message: ChatMessage, names: list[str], seed: int) -> ChatRequest:
    prompt = REWRITE_PROMPT.format(names=", ".join(names), thought=message.content)
    return ChatRequest(
        messages=[{"role": "user", "content": prompt}],
        stage="distill_rewrite",
        sampling=SamplingParams(temperature=0.0, max_tokens=256, seed=seed),
    )


def _rewritten(message: ChatMessage, names: list[str], result) -> ChatMessage:
    """The content as the model rewrote it, when that is clean and keeps the message's answer tag;
    otherwise without the sentences that name a hidden entity. Separated reasoning is always cut
    down to its clean sentences (a rewrite of one field is enough model calls per message)."""
    answer_tags = _ANSWER_TAG.findall(message.content or "")
    reasoning = _drop_sentences(message.reasoning_content, names)
    if not _content_leaks(message, names):
        return message.model_copy(update={"reasoning_content": reasoning})
    text = result.text if isinstance(result, ChatResponse) else None
    if (
        text
        and "<tool_call>" not in text
        and not any(mentions(_ANSWER_TAG.sub("", text), name) for name in names)
        and all(tag in text for tag in answer_tags)
    ):
        content = text.strip()
    else:
        thought = _drop_sentences(_ANSWER_TAG.sub("", message.content or ""), names)
        content = " ".join(filter(None, [thought, *answer_tags])) or None
    if content is None and not message.tool_calls:
        content = ""
    return message.model_copy(update={"content": content, "reasoning_content": reasoning})

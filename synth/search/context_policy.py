"""What an agent on a long search sees of its own trajectory: the whole of it (`none`), old tool
results archived to a stub it can reopen (`archive`), or its earlier work summarized by the same
model once the context passes a threshold (`summarize`, as ReSum does).

The stored trajectory always keeps every message; the policy only shapes each request. Each turn
records what the model saw (`ContextView`): which results were archived and which summary stood in
for which messages, so the context of any turn can be rebuilt from the stored trace.
"""

from dataclasses import dataclass, field
from typing import Literal

from synth.contract.observations import parse_search
from synth.schemas import ChatMessage

ContextPolicy = Literal["none", "archive", "summarize"]
PROMPT_MESSAGES = 2
"""A rollout starts with the system prompt and the question: always shown."""

SUMMARY_SYSTEM = (
    "You keep the notes of a research assistant. Summarize the work below so it can go on without it: the "
    "question, every fact found with the id of the document it came from, the candidate answers, and what is "
    "still to find. Write the summary only."
)
SUMMARY_LEAD = "Summary of your research so far (earlier turns are no longer shown):\n"


@dataclass
class ContextView:
    """What one request showed of the trajectory."""

    archived: list[int] = field(default_factory=list)
    """Indices of the tool messages shown as stubs."""
    summarized: int = 0
    """Messages before this index (after the prompt) were replaced by `summary`."""
    summary: int | None = None
    """Which of the rollout's summaries stood in for them (None: none)."""

    def record(self) -> dict:
        return {"archived": self.archived, "summarized_before": self.summarized, "summary": self.summary}


def stub(message: ChatMessage) -> str:
    """What an archived tool result shows: the documents it listed, to reopen with `open`."""
    found = parse_search(message.content or "", None)
    ids = [document["id"] for query in found[1] for document in query if document["id"]] if found else []
    if ids:
        return f"[archived result: documents {', '.join(ids)}; call open with an id to read one again]"
    return "[archived result; call the tool again to see it]"


def archived_view(messages: list[ChatMessage], keep: int) -> tuple[list[ChatMessage], ContextView]:
    """`messages` with every tool result but the latest `keep` replaced by its stub."""
    results = [index for index, message in enumerate(messages) if message.role == "tool"]
    old = set(results[: max(0, len(results) - keep)])
    shown = [
        message.model_copy(update={"content": stub(message)}) if index in old else message
        for index, message in enumerate(messages)
    ]
    return shown, ContextView(archived=sorted(old))


def summarized_view(
    messages: list[ChatMessage], prompt: int, summary: str, upto: int, number: int
) -> tuple[list[ChatMessage], ContextView]:
    """The prompt (the first `prompt` messages), the summary as a user turn, then the messages from
    `upto` on."""
    shown = [*messages[:prompt], ChatMessage(role="user", content=SUMMARY_LEAD + summary), *messages[upto:]]
    return shown, ContextView(summarized=upto, summary=number)


def transcript(messages: list[ChatMessage]) -> str:
    """The work so far as plain text, for the summarizing request."""
    lines = []
    for message in messages:
        if message.role == "assistant":
            calls = "; ".join(f"{call.function.name}({call.function.arguments})" for call in message.tool_calls or [])
            lines.append(f"Assistant: {message.content or ''}{' [calls: ' + calls + ']' if calls else ''}")
        elif message.role == "tool":
            lines.append(f"Result: {message.content or ''}")
        else:
            lines.append(f"{message.role.capitalize()}: {message.content or ''}")
    return "\n".join(lines)


def summary_cut(messages: list[ChatMessage], keep: int) -> int:
    """Where a summary ends: before the latest `keep` tool results' calls (never inside a call and
    its results); with `keep` 0, after everything (ReSum's scheme: the summary replaces the history)."""
    results = [index for index, message in enumerate(messages) if message.role == "tool"]
    if not keep:
        return len(messages)
    if len(results) <= keep:
        return 0
    cut = results[len(results) - keep]
    while cut > 0 and messages[cut - 1].role == "tool":
        cut -= 1
    return cut - 1 if cut > 0 and messages[cut - 1].tool_calls else cut

"""What an agent on a long search sees of its own trajectory: the whole of it (`none`), old tool
results archived to a stub it can reopen (`archive`), or its earlier work summarized by the same
model once the context passes a threshold (`summarize`, as ReSum does).

The stored trajectory always keeps every message; the policy only shapes each request. Each turn
records what the model saw (`ContextView`): which results were archived and which summary stood in
for which messages, so the context of any turn can be rebuilt from the stored trace.

The rules themselves live in `synth.contract.portable`, on plain messages: the verl agent loop that
`synth export --format verl` writes applies the same functions, so an RL rollout sees its history
as synth's teacher did.
"""

from dataclasses import dataclass, field
from typing import Literal

from synth.contract import portable
from synth.contract.portable import SUMMARY_LEAD
from synth.schemas import ChatMessage

ContextPolicy = Literal["none", "archive", "summarize"]


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


def plain(messages: list[ChatMessage]) -> list[dict]:
    """The messages as the portable policy functions read them."""
    return [
        {
            "role": message.role,
            "content": message.content,
            "tool_calls": [
                {"function": {"name": call.function.name, "arguments": call.function.arguments}}
                for call in message.tool_calls or []
            ],
        }
        for message in messages
    ]


def archived_view(messages: list[ChatMessage], keep: int) -> tuple[list[ChatMessage], ContextView]:
    """`messages` with every tool result but the latest `keep` replaced by its stub."""
    old = portable.archived_indices([message.role for message in messages], keep)
    stubbed = set(old)
    shown = [
        message.model_copy(update={"content": portable.archive_stub(message.content)}) if index in stubbed else message
        for index, message in enumerate(messages)
    ]
    return shown, ContextView(archived=old)


def summarized_view(
    messages: list[ChatMessage], prompt: int, summary: str, upto: int, number: int
) -> tuple[list[ChatMessage], ContextView]:
    """The prompt (the first `prompt` messages), the summary as a user turn, then the messages from
    `upto` on."""
    shown = [*messages[:prompt], ChatMessage(role="user", content=SUMMARY_LEAD + summary), *messages[upto:]]
    return shown, ContextView(summarized=upto, summary=number)


def summary_cut(messages: list[ChatMessage], keep: int) -> int:
    """Where a summary ends (portable.summary_cut)."""
    return portable.summary_cut([m.role for m in messages], [bool(m.tool_calls) for m in messages], keep)


def summary_messages(messages: list[ChatMessage], summaries: list[str], summarized: int, cut: int) -> list[dict]:
    """The summarizing request's messages (portable.summary_request over portable.summary_work)."""
    return portable.summary_request(portable.summary_work(plain(messages), summaries, summarized, cut))

"""What every format reader returns for one row, and the error it raises for a bad row."""

import re
from dataclasses import dataclass, field
from typing import Any

from synth.schemas import ChatMessage


class RowError(ValueError):
    """One row does not hold what its format needs; the importer adds the file and row number."""


@dataclass
class Rollout:
    """One trajectory read from a row, before it is tied to an item and given an id."""

    messages: list[ChatMessage]
    tools: list[dict]
    id: str | None = None
    """The row's own id for it (trajectory_id, chosen_id, rejected_id), if it has one."""
    selected: bool = True
    reject_reason: str | None = None
    correct: bool | None = None
    paired_with: int | None = None
    """DPO: index (in the same row's rollouts) of the chosen rollout this rejected one is paired with."""


@dataclass
class Parsed:
    question: str
    rollouts: list[Rollout] = field(default_factory=list)


def require(row: dict[str, Any], key: str) -> Any:
    value = row.get(key)
    if value is None:
        raise RowError(f"no `{key}` field")
    return value


def first_user(messages: list[ChatMessage]) -> str:
    """The question: the content of the first user message, without the "Question:" label a prompt
    puts before it (synth's own exports do), so a re-export's prompt does not say it twice."""
    for message in messages:
        if message.role == "user" and message.content and message.content.strip():
            return _QUESTION_LABEL.sub("", message.content, count=1).strip() or message.content
    raise RowError("no user message with the question")


_QUESTION_LABEL = re.compile(r"^\s*question\s*:\s*", re.IGNORECASE)

"""What the trajectory exports (sft, sft-chatml, searchr1-sft, dpo) share: which trajectories they
read, and the OpenAI message shape they write.

Teacher rollouts are the training targets (or, with `--role proposer`, self-play proposals whose
question passed every gate); solver trajectories of the panel sit in the same table and are never
exported as SFT or DPO data.
"""

import json
from typing import Any, Iterator

import pyarrow as pa

from synth.errors import NotFoundError
from synth.schemas import ChatMessage, Trajectory
from synth.store.arrow_schema import arrow_type, to_row
from synth.store.export.options import ExportRequest
from synth.store.reader import iter_records

MESSAGES = pa.list_(arrow_type(ChatMessage))
"""Messages in Parquet: every ChatMessage field, null where a message lacks it."""
PLAIN_MESSAGES = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
"""Role/content-only chat (ChatML and Search-R1 text)."""


def require_trajectories(request: ExportRequest, fmt: str) -> None:
    if request.version.row_counts.get("trajectories", 0) == 0:
        raise NotFoundError(
            f"{request.version.ref} has no trajectories, so there is nothing to export as {fmt}; "
            "export its items with --format verl or --format jsonl instead"
        )


def training_trajectories(request: ExportRequest, condition: str) -> Iterator[Trajectory]:
    """Trajectories of the requested role (teacher by default) matching the SQL `condition` and
    the user's --where, in stored order."""
    where = f"role = '{request.role}' and ({condition})" + (f" and ({request.where})" if request.where else "")
    yield from iter_records(request.settings, request.version, "trajectories", where)


def openai_message(message: ChatMessage) -> dict[str, Any]:
    """OpenAI shape: optional keys omitted, but `content` always present (null on tool-call turns)."""
    return {"role": message.role, "content": message.content, **message.model_dump(exclude_none=True)}


def messages_value(messages: list[ChatMessage], parquet: bool) -> list[dict[str, Any]]:
    return [to_row(message) if parquet else openai_message(message) for message in messages]


def tools_value(tools: list[dict], parquet: bool) -> list[dict] | str:
    """The list itself in JSON Lines; a JSON string in Parquet, where structs would pad the
    differently shaped tool schemas with nulls that chat templates then print."""
    return json.dumps(tools, ensure_ascii=False) if parquet else tools


def none_selected_note(request: ExportRequest, count: int) -> list[str]:
    return [] if count else [f"{request.version.ref} has trajectories but no {request.role} trajectory is selected for SFT"]

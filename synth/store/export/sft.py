"""SFT chat data: one row per selected teacher trajectory (or self-play proposal, with
`--role proposer`), in OpenAI format:

    {"messages": [...], "tools": [...], "item_id": str, "trajectory_id": str}

In Parquet, `tools` is a JSON string (tool schemas differ in shape, and Arrow structs would pad
them with nulls that break chat templates); in JSON Lines it is the list itself. Messages keep
the OpenAI quirks: `content` null on tool-call turns, arguments as JSON strings (verbatim, even
when malformed), repeated call ids.

Loading the JSON Lines with `datasets.load_dataset("json", ...)`: datasets 5 stores objects whose
keys differ between rows as its `Json` feature, so messages and tools come back exactly as written;
older versions infer structs and pad every message and tool schema with the keys of the others
(`None` values): drop None-valued keys before applying a chat template. Some templates (e.g.
MiniCPM-V 4.5's, shipped in vLLM) test `'</think>' in message.content` and fail on the null
content of tool-call turns: give those templates `""` instead.
"""

from typing import Iterator

import pyarrow as pa

from synth.schemas import Trajectory
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import PARQUET_SUFFIXES, check_output, write_rows
from synth.store.export.trajectories import (
    MESSAGES,
    messages_value,
    none_selected_note,
    require_trajectories,
    training_trajectories,
    tools_value,
)

SCHEMA = pa.schema([
    ("messages", MESSAGES),
    ("tools", pa.string()),
    ("item_id", pa.string()),
    ("trajectory_id", pa.string()),
])


def sft_row(trajectory: Trajectory, parquet: bool) -> dict:
    return {
        "messages": messages_value(trajectory.messages, parquet),
        "tools": tools_value(trajectory.tools, parquet),
        "item_id": trajectory.item_id,
        "trajectory_id": trajectory.id,
    }


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet", ".jsonl"))
    require_trajectories(request, "SFT")
    parquet = request.out.suffix in PARQUET_SUFFIXES

    def rows() -> Iterator[dict]:
        for trajectory in training_trajectories(request, "selected"):
            yield sft_row(trajectory, parquet)

    count = write_rows(rows(), SCHEMA, request.out)
    return ExportResult(request.out, count, none_selected_note(request, count))

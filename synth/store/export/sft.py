"""SFT chat data: one row per selected teacher trajectory (or self-play proposal, with
`--role proposer`), in OpenAI format, rendered under the agent contract:

    {"messages": [...], "tools": [...], "item_id": str, "trajectory_id": str, "step_labels": [str]}

`step_labels` holds the label of each call of the world's tools in order (exploration,
verification, redundant; synth.solving.trajectory_reading): metadata trainers ignore, and a filter
for those that read it (`--where` picks on it before the export too).

Messages keep the OpenAI conventions (`content` null on tool-call turns, repeated call ids) with
tool-call `arguments` as JSON objects, which chat templates (Qwen2.5's `tojson`, TRL's training
templates) encode exactly once; `--arguments string` writes the JSON strings instead, and a
malformed argument string always stays a string (counted in the notes). Every row ends on an
assistant turn (LLaMA-Factory drops rows ending on a tool turn).

In Parquet, `messages` and `tools` are lists of JSON values (Arrow's `arrow.json`), which
`datasets` >= 4.7 loads back as objects; in JSON Lines they are plain lists. Some templates (e.g.
MiniCPM-V 4.5's, shipped in vLLM) test `'</think>' in message.content` and fail on the null
content of tool-call turns: give those templates `""` instead.
"""

from collections.abc import Iterator

import pyarrow as pa

from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import check_output, write_rows
from synth.store.export.trajectories import (
    DATASETS_NOTE,
    MESSAGES,
    Skipped,
    export_contract,
    nothing_to_export,
    openai_messages,
    rendered,
    require_trajectories,
)

SCHEMA = pa.schema(
    [
        ("messages", MESSAGES),
        ("tools", MESSAGES),
        ("item_id", pa.string()),
        ("trajectory_id", pa.string()),
        ("step_labels", pa.list_(pa.string())),
    ]
)


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet", ".jsonl"))
    require_trajectories(request, "SFT")
    contract = export_contract(request)
    skipped = Skipped()

    def rows() -> Iterator[dict]:
        for trajectory, conversation in rendered(request, "selected", contract, skipped):
            yield {
                "messages": openai_messages(conversation.messages, request, skipped),
                "tools": conversation.tools,
                "item_id": trajectory.item_id,
                "trajectory_id": trajectory.id,
                "step_labels": list(trajectory.step_labels),
            }

    count = write_rows(
        rows(),
        SCHEMA,
        request.out,
        lambda: nothing_to_export(request, "SFT", skipped),
        lambda: skipped.require_calls(request, "SFT"),
    )
    return ExportResult(request.out, count, [*skipped.notes(), DATASETS_NOTE])

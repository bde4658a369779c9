"""Preference pairs in TRL's conversational format, OpenAI message shape:

    {"prompt": [system and user messages], "chosen": [rest of the chosen trajectory],
     "rejected": [rest of the rejected one], "tools": [...], "item_id": str,
     "chosen_id": str, "rejected_id": str}

Per item, the selected teacher trajectory (chosen) is paired with every teacher trajectory of the
same item rejected as "incorrect": both followed the protocol, so the pair teaches what to find,
not how to format. A rejected trajectory whose metadata lists `dpo_chosen_ids` (set by `synth
datasets import --format dpo`) is paired only with those, so imported pairs come back as they were.
Pairs whose prompts differ (e.g. another system prompt) are skipped and counted. `tools` follows
the `sft` export: a list in JSON Lines, a JSON string in Parquet.
"""

from itertools import chain
from typing import Iterator

import pyarrow as pa

from synth.errors import NotFoundError
from synth.schemas import Trajectory
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import PARQUET_SUFFIXES, check_output, write_rows
from synth.store.export.trajectories import MESSAGES, messages_value, require_trajectories, training_trajectories, tools_value

SCHEMA = pa.schema([
    ("prompt", MESSAGES),
    ("chosen", MESSAGES),
    ("rejected", MESSAGES),
    ("tools", pa.string()),
    ("item_id", pa.string()),
    ("chosen_id", pa.string()),
    ("rejected_id", pa.string()),
])

PAIRED_WITH = "dpo_chosen_ids"


def prompt_length(trajectory: Trajectory) -> int:
    """How many leading messages are prompt (system and user) before the first assistant turn."""
    return next((index for index, message in enumerate(trajectory.messages) if message.role == "assistant"), len(trajectory.messages))


def pairs(trajectories: Iterator[Trajectory]) -> Iterator[tuple[Trajectory, Trajectory]]:
    """(chosen, rejected) per item, items in order of first appearance, chosen-major."""
    chosen: dict[str, list[Trajectory]] = {}
    rejected: dict[str, list[Trajectory]] = {}
    for trajectory in trajectories:
        chosen.setdefault(trajectory.item_id, [])
        rejected.setdefault(trajectory.item_id, [])
        (chosen if trajectory.selected else rejected)[trajectory.item_id].append(trajectory)
    for item_id, winners in chosen.items():
        for winner in winners:
            for loser in rejected[item_id]:
                allowed = loser.metadata.get(PAIRED_WITH)
                if allowed is None or winner.id in allowed:
                    yield winner, loser


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet", ".jsonl"))
    require_trajectories(request, "DPO pairs")
    parquet = request.out.suffix in PARQUET_SUFFIXES
    mismatched = 0

    def rows() -> Iterator[dict]:
        nonlocal mismatched
        for winner, loser in pairs(training_trajectories(request, "selected or reject_reason = 'incorrect'")):
            cut = prompt_length(winner)
            if loser.messages[:prompt_length(loser)] != winner.messages[:cut]:
                mismatched += 1
                continue
            yield {
                "prompt": messages_value(winner.messages[:cut], parquet),
                "chosen": messages_value(winner.messages[cut:], parquet),
                "rejected": messages_value(loser.messages[cut:], parquet),
                "tools": tools_value(winner.tools, parquet),
                "item_id": winner.item_id,
                "chosen_id": winner.id,
                "rejected_id": loser.id,
            }

    pending = rows()
    first = next(pending, None)
    if first is None:
        why = f"the prompts of all {mismatched} pairs differ" if mismatched else (
            "no item has both a selected teacher trajectory and one rejected as incorrect")
        raise NotFoundError(
            f"{request.version.ref} has no preference pairs to export: {why}; "
            "sample more rollouts per item, or export --format sft"
        )
    count = write_rows(chain([first], pending), SCHEMA, request.out)
    notes = [f"skipped {mismatched} pairs whose chosen and rejected prompts differ"] if mismatched else []
    return ExportResult(request.out, count, notes)

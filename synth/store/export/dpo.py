"""Preference pairs in TRL's conversational format, OpenAI message shape:

    {"prompt": [system and user messages], "chosen": [rest of the chosen conversation],
     "rejected": [rest of the rejected one], "tools": [...], "item_id": str,
     "chosen_id": str, "rejected_id": str, "rejected_reason": str}

Per item, the selected teacher trajectory (chosen) is paired with every teacher trajectory of the
same item rejected as "incorrect" or by a check beyond the answer (answer_not_grounded,
unseen_entity, repeated_call, calls_after_answer_seen: a right answer reached badly): both
followed the protocol, so the pair teaches what to find and how, not how to format. The rejected
side's reason is written with the pair (`--where` on the trajectories table picks which to keep).
A rejected trajectory whose metadata lists `dpo_chosen_ids` (set by `synth
datasets import --format dpo`) is paired only with those, so imported pairs come back as they were.
Both sides are rendered under the agent contract like every trajectory export (arguments as
objects unless `--arguments string`); pairs whose prompts still differ (e.g. imported rows with
another system prompt) are skipped and counted. `messages` and `tools` follow the `sft` export.
"""

from collections.abc import Iterator
from itertools import chain

import pyarrow as pa

from synth.contract.render import Conversation
from synth.errors import NotFoundError
from synth.schemas import ChatMessage, Trajectory
from synth.solving.rejection import PREFERENCE_NEGATIVES
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import check_output, write_rows
from synth.store.export.trajectories import (
    DATASETS_NOTE,
    MESSAGES,
    Skipped,
    export_contract,
    openai_messages,
    rendered,
    require_trajectories,
)

SCHEMA = pa.schema(
    [
        ("prompt", MESSAGES),
        ("chosen", MESSAGES),
        ("rejected", MESSAGES),
        ("tools", MESSAGES),
        ("item_id", pa.string()),
        ("chosen_id", pa.string()),
        ("rejected_id", pa.string()),
        ("rejected_reason", pa.string()),
    ]
)

PAIRED_WITH = "dpo_chosen_ids"

Rendered = tuple[Trajectory, Conversation]


def prompt_length(messages: list[ChatMessage]) -> int:
    """How many leading messages are prompt (system and user) before the first assistant turn."""
    return next((index for index, message in enumerate(messages) if message.role == "assistant"), len(messages))


def pairs(trajectories: Iterator[Rendered]) -> Iterator[tuple[Rendered, Rendered]]:
    """(chosen, rejected) per item, items in order of first appearance, chosen-major."""
    chosen: dict[str, list[Rendered]] = {}
    rejected: dict[str, list[Rendered]] = {}
    for entry in trajectories:
        trajectory = entry[0]
        chosen.setdefault(trajectory.item_id, [])
        rejected.setdefault(trajectory.item_id, [])
        (chosen if trajectory.selected else rejected)[trajectory.item_id].append(entry)
    for item_id, winners in chosen.items():
        for winner in winners:
            for loser in rejected[item_id]:
                allowed = loser[0].metadata.get(PAIRED_WITH)
                if allowed is None or winner[0].id in allowed:
                    yield winner, loser


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet", ".jsonl"))
    require_trajectories(request, "DPO pairs")
    skipped = Skipped()
    mismatched = 0

    def rows() -> Iterator[dict]:
        nonlocal mismatched
        negatives = ", ".join(f"'{reason}'" for reason in PREFERENCE_NEGATIVES)
        candidates = rendered(request, f"selected or reject_reason in ({negatives})", export_contract(request), skipped)
        for (winner, chosen), (loser, rejected) in pairs(candidates):
            cut = prompt_length(chosen.messages)
            if rejected.messages[: prompt_length(rejected.messages)] != chosen.messages[:cut]:
                mismatched += 1
                continue
            yield {
                "prompt": openai_messages(chosen.messages[:cut], request, skipped),
                "chosen": openai_messages(chosen.messages[cut:], request, skipped),
                "rejected": openai_messages(rejected.messages[cut:], request, skipped),
                "tools": chosen.tools,
                "item_id": winner.item_id,
                "chosen_id": winner.id,
                "rejected_id": loser.id,
                "rejected_reason": loser.reject_reason,
            }

    pending = rows()
    first = next(pending, None)
    if first is None:
        why = (
            f"the prompts of all {mismatched} pairs differ"
            if mismatched
            else (
                "no item has both a selected teacher trajectory and one rejected as incorrect or by a check "
                "beyond the answer"
            )
        )
        if skipped.reasons:
            why += "; " + "; ".join(skipped.notes("trajectories"))
        raise NotFoundError(
            f"{request.version.ref} has no preference pairs to export: {why}; "
            "sample more rollouts per item, or export --format sft"
        )
    count = write_rows(
        chain([first], pending), SCHEMA, request.out, check=lambda: skipped.require_calls(request, "DPO")
    )
    notes = [f"skipped {mismatched} pairs whose chosen and rejected prompts differ"] if mismatched else []
    return ExportResult(request.out, count, [*notes, *skipped.notes("trajectories"), DATASETS_NOTE])

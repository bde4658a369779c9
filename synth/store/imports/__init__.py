"""`synth datasets import`: trajectory files in the shapes the exports write (and the common
variants of those shapes) published as a new dataset version, whole or not at all.

Every row becomes teacher trajectories (role "teacher", model from a `model` column or
"imported"; SFT rows selected; DPO rows a selected chosen side and a rejected side with
reject_reason "incorrect") and every distinct question an item of recipe "imported". Every row is
read and checked before anything is published, so a bad row publishes nothing.
"""

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from synth.errors import ConfigError, InputFileError
from synth.kg.name_mentions import WorldNames
from synth.row_files import read_rows
from synth.schemas import DatasetVersion
from synth.settings import Settings
from synth.store.imports import chatml, dpo, searchr1, sft
from synth.store.imports.build import Built, build
from synth.store.imports.fields import ImportFields
from synth.store.publish import VersionSpec, publish_version, validate_dataset_name

FORMATS: dict[str, str] = {
    "sft": "OpenAI messages + tools per row (the `sft` export)",
    "sft-chatml": "role/content chat with <tool_call>/<tool_response> tags (the `sft-chatml` export)",
    "searchr1-sft": "a prompt and one Search-R1 completion per row (the `searchr1-sft` export)",
    "dpo": "TRL preference pairs {prompt, chosen, rejected} (the `dpo` export)",
}


@dataclass
class ImportResult:
    version: DatasetVersion
    rows: int
    trajectories: int
    items: int
    notes: list[str] = field(default_factory=list)


def _parser(fmt: str):
    return {"sft": sft.parse, "sft-chatml": chatml.parse, "searchr1-sft": searchr1.parse, "dpo": dpo.parse}[fmt]


def read_source(
    path: Path, fmt: str, fields: ImportFields = ImportFields(), strict: bool = False, names: WorldNames | None = None
) -> tuple[Built, dict]:
    """Every row of `path` read as `fmt` into items and trajectories (nothing published), and the
    figures an import reports (`names`: a world's entity names, for the unseen_entity check)."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown import format {fmt!r}; choose one of {', '.join(FORMATS)}")
    path = Path(path)
    built = build(path, read_rows(path), _parser(fmt), fields, strict, names)
    if not built.trajectories:
        raise InputFileError(f"{path} has no rows to import")
    summary = {
        "rows": built.rows,
        "items": len(built.items),
        "trajectories": len(built.trajectories),
        "merged_rollouts": built.merged,
        "answers_from_trajectories": built.answers_from_trajectories,
        **({"failed_outcomes": built.outcomes} if built.outcomes else {}),
        **({"unread_tool_use_rows": len(built.unread_tool_use)} if built.unread_tool_use else {}),
        **({"trimmed_after_answer": built.trimmed} if built.trimmed else {}),
        **({"unanswered_failures": len(built.unanswered_failures)} if built.unanswered_failures else {}),
        "findings": dict(sorted(built.findings.items())),
        "step_labels": dict(Counter(label for trajectory in built.trajectories for label in trajectory.step_labels)),
    }
    return built, summary


def import_file(
    settings: Settings,
    path: Path,
    fmt: str,
    name: str,
    fields: ImportFields = ImportFields(),
    strict: bool = False,
    names: WorldNames | None = None,
) -> ImportResult:
    """Read `path` as `fmt` and publish it as the next version of dataset `name`; `strict`: refuse a
    row whose text looks like tool use in no dialect synth reads (else it is reported); `names`: the
    entity names the unseen_entity check reads (None: that check is not made)."""
    validate_dataset_name(name)
    path = Path(path)
    built, summary = read_source(path, fmt, fields, strict, names)
    spec = VersionSpec(
        name=name,
        recipe="imported",
        config={"file": str(path.resolve()), "format": fmt, **fields.model_dump(mode="json")},
        models={"teacher": ", ".join(sorted(built.models))},
        summary=summary,
    )
    version = publish_version(settings, spec, {"items": built.items, "trajectories": built.trajectories})
    notes = []
    if built.unread_tool_use:
        rows = ", ".join(f"{row} ({sign})" for row, sign in built.unread_tool_use[:5])
        notes.append(
            f"{len(built.unread_tool_use)} rows look like tool use in no dialect synth reads and were imported "
            f"without tool calls (first: rows {rows}); convert them, or pass --strict to refuse such rows"
        )
    notes += [
        f"outcome read from each row's `{key}`"
        + ("" if fields.outcome_field else " (found; --outcome-field to choose)")
        + f": {failed} rows failed by it (below {fields.outcome_threshold:g} or false), imported as rejected "
        "trajectories (DPO negatives, never SFT rows)"
        for key, failed in built.outcomes.items()
    ]
    if built.trimmed:
        notes.append(
            f"{built.trimmed} rollouts went on after their last answer with a user turn that got no answer (e.g. a "
            "user's goodbye): trimmed to that answer"
        )
    if built.unanswered_failures:
        rows = ", ".join(map(str, built.unanswered_failures[:5]))
        notes.append(
            f"left out {len(built.unanswered_failures)} questions whose every rollout failed and whose row has no "
            f"reference answer (first: rows {rows}): nothing says what their answer is; pass --answer-field FIELD "
            "if the file has one"
        )
    if built.answers_from_trajectories:
        notes.append(
            f"{built.answers_from_trajectories} items take their answer from their trajectory's final answer "
            "(metadata answer_source='trajectory'); pass --answer-field if the file has reference answers"
        )
    if built.findings:
        flagged = ", ".join(f"{reason}: {count}" for reason, count in sorted(built.findings.items()))
        notes.append(
            f"checks beyond the answer flag some trajectories ({flagged}); recorded in `findings`, not applied: "
            "export with --where 'len(findings) = 0' to leave them out"
        )
    if built.merged:
        notes.append(
            f"{built.merged} rollouts repeated earlier ones (e.g. the chosen side of further DPO pairs) and were "
            "stored once"
        )
    return ImportResult(version, built.rows, len(built.trajectories), len(built.items), notes)

"""Exports of one published version to the formats trainers read."""

from collections import Counter
from pathlib import Path

from synth.contract import get_contract
from synth.errors import ConfigError
from synth.export_formats import EXPORT_FORMATS
from synth.settings import Settings
from synth.splits import SPLITS, check_split, split_of
from synth.store.catalog import Catalog
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.reader import read_columns

FORMATS = EXPORT_FORMATS
"""Name -> ExportFormat (synth.export_formats: the one table)."""


ROLES = ("teacher", "proposer")
ARGUMENTS = ("object", "string")
PROCEDURAL = ("include", "exclude", "only")
"""--procedural: the path teacher's demonstrations in trajectory exports, beside model teachers' or not, or alone."""
REASONING = ("keep", "drop")
"""--reasoning: the assistant turns' reasoning kept in trajectory exports (as each consumer reads it) or dropped."""


def export_version(settings: Settings, ref: str, fmt: str, out: Path, **options) -> ExportResult:
    """Export the published version `ref` (NAME or NAME@VERSION) as `fmt` to `out`."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    role = options.get("role", "teacher")
    if role not in ROLES:
        raise ConfigError(f"unknown trajectory role {role!r}; choose one of {', '.join(ROLES)}")
    if options.get("arguments", "object") not in ARGUMENTS:
        raise ConfigError(f"unknown --arguments {options['arguments']!r}; choose object or string")
    if options.get("procedural", "include") not in PROCEDURAL:
        raise ConfigError(f"unknown --procedural {options['procedural']!r}; choose include, exclude or only")
    if options.get("reasoning", "keep") not in REASONING:
        raise ConfigError(f"unknown --reasoning {options['reasoning']!r}; choose keep or drop")
    if options.get("contract") is not None:
        get_contract(options["contract"])
    proposer_formats = [name for name, entry in FORMATS.items() if entry.proposer]
    if role != "teacher" and not FORMATS[fmt].proposer:
        raise ConfigError(
            f"--role {role} exports with {' or '.join(proposer_formats)} only ({fmt} is built around answering "
            "a question); drop --role to export teacher trajectories"
        )
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref)
    request = ExportRequest(settings=settings, version=version, out=Path(out), **options)
    check_split(request.split)
    result = FORMATS[fmt].exporter()(request)
    held = held_out(request)
    if held:  # first: the last note of a training format is the command that trains on it
        result.notes.insert(0, held)
    return result


def held_out(request: ExportRequest) -> str | None:
    """What the split left out, so no item goes missing silently (None: nothing was)."""
    if request.split == "all" or not request.version.row_counts.get("items"):
        return None
    fractions = request.fractions
    counts = Counter(
        split_of(item_id, fractions) for (item_id,) in read_columns(request.settings, request.version, "items", ["id"])
    )
    others = [f"{counts[split]} {split}" for split in SPLITS if split != request.split and counts[split]]
    if not others:
        return None
    return (
        f"exported the {request.split} split ({counts[request.split]} of {counts.total()} items by item id); held out: "
        f"{', '.join(others)} (--split all exports every item; synth eval scores the test split)"
    )

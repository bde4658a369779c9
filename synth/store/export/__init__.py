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
from synth.store.export.pass_band import band_note, resolve_band
from synth.store.export.worlds import parse_world_urls
from synth.store.reader import read_columns, shard_glob

FORMATS = EXPORT_FORMATS
"""Name -> ExportFormat (synth.export_formats: the one table)."""


ROLES = ("teacher", "proposer")
ARGUMENTS = ("object", "string")
PROCEDURAL = ("include", "exclude", "only")
"""--procedural: the path teacher's demonstrations in trajectory exports, beside model teachers' or not, or alone."""
REASONING = ("keep-all", "keep-last", "drop")
"""--reasoning: which assistant turns keep their reasoning in trajectory exports (written as each
consumer reads it): every turn, only the last (the answer's), or none. `keep` is keep-all."""
CONTEXT = ("full", "seen")
"""--context: trajectories as they happened, or as their model saw them under a context policy."""
REASONING_WHERE = {
    "sft": "in each turn's `reasoning_content`, which TRL's Qwen3, DeepSeek-R1 and GPT-OSS training templates "
    "render as <think> (a template that does not read the field, such as Llama 3's, leaves it out: export "
    "sft-chatml for those)",
    "dpo": "in each turn's `reasoning_content` (as the sft export)",
}
"""Where each format writes the reasoning it keeps (the others: <think> blocks in the turn's text)."""


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
    if options.get("reasoning") == "keep":
        options["reasoning"] = "keep-all"
    if options.get("reasoning", "keep-all") not in REASONING:
        raise ConfigError(f"unknown --reasoning {options['reasoning']!r}; choose {', '.join(REASONING)}")
    if options.get("context", "full") not in CONTEXT:
        raise ConfigError(f"unknown --context {options['context']!r}; choose full or seen")
    if options.get("contract") is not None:
        get_contract(options["contract"])
    proposer_formats = [name for name, entry in FORMATS.items() if entry.proposer]
    if role != "teacher" and not FORMATS[fmt].proposer:
        raise ConfigError(
            f"--role {role} exports with {' or '.join(proposer_formats)} only ({fmt} is built around answering "
            "a question); drop --role to export teacher trajectories"
        )
    band = resolve_band(settings, options.pop("for_eval", None), options.pop("pass_band", None))
    options["world_urls"] = parse_world_urls(options.pop("world_url", None))
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref)
    request = ExportRequest(settings=settings, version=version, out=Path(out), pass_band=band, **options)
    check_split(request.split)
    result = FORMATS[fmt].exporter()(request)
    if band is not None:  # how the band cut the chosen items, before the split note that comes first
        result.notes.insert(0, band_note(band, shard_glob(settings, version, "items"), request.predicate(band=False)))
    held = held_out(request)
    if FORMATS[fmt].carries == "trajectories":  # before the last note (a trainer's command, or how to load)
        result.notes.insert(max(0, len(result.notes) - 1), reasoning_note(fmt, request.reasoning))
    if held:  # first: the last note of a training format is the command that trains on it
        result.notes.insert(0, held)
    return result


def reasoning_note(fmt: str, mode: str) -> str:
    """Which turns' reasoning the export kept, and where it wrote it."""
    if mode == "drop":
        return "reasoning: dropped from every turn (--reasoning drop)"
    turns = "every assistant turn" if mode == "keep-all" else "the last assistant turn only"
    where = REASONING_WHERE.get(fmt, "as <think> blocks in the turn's text")
    return f"reasoning: kept on {turns} (--reasoning {mode}), {where}"


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

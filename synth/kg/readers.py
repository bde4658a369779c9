"""Read rows of a triples, entities or relations file in the layouts knowledge graphs ship in.

Delimited text (TSV, CSV, pipe- or semicolon-separated; plain or .gz; with or without a header
row) and JSON Lines. Every line is accounted for: a row comes out, or a Problem with the file, line
number and reason does. Nothing is dropped silently.
"""

import csv
import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from synth.errors import ConfigError
from synth.textfiles import MAX_LINE_BYTES, text_lines

DELIMITERS = {"tsv": "\t", "csv": ","}
SNIFFED = "\t|,;"
"""Delimiters tried, in order, when the file name does not say."""


@dataclass(frozen=True)
class Problem:
    file: str
    line: int
    reason: str
    """snake_case: wrong_field_count, empty_field, invalid_json, missing_key, not_an_object."""
    text: str


@dataclass(frozen=True)
class Layout:
    """What one file holds: its fields in order (for files without a header), and the names a
    header or a JSON object may use for each."""

    fields: tuple[str, ...]
    required: int
    """How many leading fields every row must have."""
    synonyms: dict[str, tuple[str, ...]]
    named_only: tuple[str, ...] = ()
    """Fields read only where a header or JSON key names them, never by position."""

    @property
    def positional(self) -> list[str]:
        return [field for field in self.fields if field not in self.named_only]


TRIPLES = Layout(
    ("head", "relation", "tail"),
    3,
    {
        "head": ("head", "h", "subject", "s", "source"),
        "relation": ("relation", "r", "predicate", "p", "rel", "edge"),
        "tail": ("tail", "t", "object", "o", "target"),
    },
)
ENTITIES = Layout(
    ("id", "name", "description", "aliases"),
    2,
    {
        "id": ("id", "entity", "entity_id", "mid", "qid"),
        "name": ("name", "label", "title"),
        "description": ("description", "desc", "text", "abstract"),
        "aliases": ("aliases", "alias", "also_known_as", "alt_labels", "altlabels"),
    },
    named_only=("aliases",),
)
RELATIONS = Layout(
    ("id", "forward", "inverse", "head_type", "tail_type", "literal", "head_role", "tail_role"),
    1,
    {
        "id": ("id", "relation", "relation_id"),
        "forward": ("forward", "phrase", "label", "name"),
        "inverse": ("inverse", "inverse_phrase", "inverse_label"),
        "head_type": ("head_type", "domain"),
        "tail_type": ("tail_type", "range"),
        "literal": ("literal", "tail_literal", "value", "is_literal"),
        "head_role": ("head_role",),
        "tail_role": ("tail_role",),
    },
    named_only=("head_role", "tail_role"),
)

ALIAS_SEPARATOR = "|"
"""Between several aliases in one delimited cell (a JSON list works too)."""


TRUE_FLAGS = frozenset({"1", "true", "yes", "y", "literal", "t"})


def parse_flag(cell) -> bool:
    """A yes/no cell: true, yes, 1, literal (any case) are true; empty and anything else false."""
    return cell is True or str(cell or "").strip().lower() in TRUE_FLAGS


def split_aliases(cell: str | None) -> list[str]:
    return [alias for alias in (cell or "").split(ALIAS_SEPARATOR) if alias]


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) for every non-blank line of a text file (plain or .gz)."""
    with text_lines(path) as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line


def file_format(path: Path, requested: str = "auto") -> str:
    """jsonl, or the delimiter name: tsv / csv / one sniffed from the first lines."""
    if requested != "auto":
        return requested
    suffixes = [suffix.lower() for suffix in path.suffixes if suffix.lower() != ".gz"]
    last = suffixes[-1].lstrip(".") if suffixes else ""
    if last in ("jsonl", "json", "ndjson"):
        return "jsonl"
    if last in DELIMITERS:
        return last
    return "sniff"


def sniff_delimiter(path: Path, minimum_fields: int) -> str:
    """The delimiter that splits most (over half) of the first 200 non-empty lines into the same number
    (at least `minimum_fields`) of fields; a few malformed lines do not throw it off."""
    with text_lines(path) as handle:
        lines = [line.rstrip("\r\n") for _, line in zip(range(200), handle) if line.strip()]
    best, best_share = None, 0.0
    for delimiter in SNIFFED:
        counts = Counter(len(line.split(delimiter)) for line in lines)
        fields, lines_with = counts.most_common(1)[0] if counts else (0, 0)
        share = lines_with / len(lines) if lines else 0.0
        if fields >= minimum_fields and share > best_share:
            best, best_share = delimiter, share
    if best is None or best_share <= 0.5:
        raise ConfigError(f"{path}: cannot tell the delimiter (tried tab, |, comma, semicolon); pass --delimiter")
    return best


def read_rows(
    path: Path,
    layout: Layout,
    requested_format: str = "auto",
    delimiter: str | None = None,
    columns: tuple[str, ...] | None = None,
) -> Iterator[tuple[int, dict[str, str]] | Problem]:
    """(line number, {field: value}) for each good row, a Problem for each bad line."""
    kind = file_format(path, requested_format)
    if kind == "jsonl":
        yield from _read_jsonl(path, layout)
        return
    separator = delimiter or DELIMITERS.get(kind) or sniff_delimiter(path, layout.required)
    yield from _read_delimited(path, layout, separator, columns)


def _read_delimited(path: Path, layout: Layout, delimiter: str, columns: tuple[str, ...] | None):
    csv.field_size_limit(MAX_LINE_BYTES)  # a field may be as long as a line may
    with text_lines(path) as handle:
        reader = csv.reader(
            handle, delimiter=delimiter, quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL
        )
        fields: list[str | None] = list(columns or layout.positional)
        for number, row in enumerate(reader, start=1):
            if not row or (len(row) == 1 and not row[0].strip()):
                continue  # blank line
            if number == 1 and columns is None:
                header = _header(row, layout)
                if header is not None:
                    fields = [*header]
                    continue
            yield _row(path, number, delimiter, fields, row, layout)


def _header(row: list[str], layout: Layout) -> list[str] | None:
    """The row read as a header (field names, unknown columns as None), or None if it is data."""
    names = {synonym: field for field, synonyms in layout.synonyms.items() for synonym in synonyms}
    mapped = [names.get(cell.strip().lower()) for cell in row]
    required = layout.fields[: layout.required]
    return mapped if all(field in mapped for field in required) else None  # type: ignore[return-value]


def _row(path: Path, number: int, delimiter: str, fields: list[str | None], values: list[str], layout: Layout):
    required = layout.fields[: layout.required]
    needed = max(fields.index(field) for field in required) + 1
    if len(values) > len(fields) and fields[-1] == "description":
        # A description may contain the delimiter itself; nothing else may.
        values = values[: len(fields) - 1] + [delimiter.join(values[len(fields) - 1 :])]
    if len(values) < needed or len(values) > len(fields):
        return Problem(str(path), number, "wrong_field_count", delimiter.join(values)[:200])
    row = {field: value.strip() for field, value in zip(fields, values) if field is not None}
    if any(not row.get(field) for field in required):
        return Problem(str(path), number, "empty_field", delimiter.join(values)[:200])
    return number, row


def _read_jsonl(path: Path, layout: Layout):
    required = layout.fields[: layout.required]
    for number, line in numbered_lines(path):
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            yield Problem(str(path), number, "invalid_json", line.strip()[:200])
            continue
        if not isinstance(value, dict):
            yield Problem(str(path), number, "not_an_object", line.strip()[:200])
            continue
        row = {}
        for field, synonyms in layout.synonyms.items():
            found = next((value[key] for key in synonyms if key in value), None)
            if field == "aliases" and isinstance(found, list):
                found = ALIAS_SEPARATOR.join(str(item).strip() for item in found if str(item).strip())
            if found is not None:
                row[field] = str(found).strip()
        missing = [field for field in required if field not in row]
        if missing:
            yield Problem(str(path), number, "missing_key", line.strip()[:200])
        elif any(not row[field] for field in required):
            yield Problem(str(path), number, "empty_field", line.strip()[:200])
        else:
            yield number, row

"""Rows of a file a user gives (`datasets import`, an eval's `--benchmark`), numbered for error
messages: JSON Lines, plain or gzipped (row = line number), JSON (a list, or an object holding one;
row = position), CSV with a header line (row = line number; every cell a string) or Parquet (row =
position)."""

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from synth.errors import ConfigError, InputFileError
from synth.textfiles import read_json_document, require_file, text_lines

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")


def read_rows(path: Path, what: str = "import file") -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row) of every row; a row that is not a JSON object, or a line that is not JSON,
    is an InputFileError naming it (nothing is skipped silently). `what` names the file in errors."""
    require_file(path, what)
    suffix = ".jsonl" if path.name.lower().endswith(".jsonl.gz") else path.suffix.lower()  # text_lines unzips
    if suffix not in SUFFIXES:
        raise ConfigError(
            f"cannot read {what} {path}: synth reads {', '.join(SUFFIXES)} files; convert it or fix the suffix"
        )
    readers = {".parquet": _parquet, ".jsonl": _jsonl, ".csv": _csv, ".json": _json}
    numbered = readers[suffix](path)
    for number, row in numbered:
        if not isinstance(row, dict):
            raise InputFileError(f"{path} row {number}: not a JSON object but {type(row).__name__}")
        yield number, row


def _jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    with text_lines(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except json.JSONDecodeError as error:
                raise InputFileError(
                    f"{path} row {number}: not valid JSON ({error.msg} at character {error.pos})"
                ) from None


def _csv(path: Path) -> Iterator[tuple[int, Any]]:
    with text_lines(path) as handle:
        text = "".join(handle)
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff")))  # a spreadsheet's byte-order mark
    try:
        for row in reader:
            if None in row:
                raise InputFileError(f"{path} row {reader.line_num}: more cells than the header has columns")
            yield reader.line_num, row
    except csv.Error as error:
        raise InputFileError(f"{path} row {reader.line_num}: not valid CSV ({error})") from None


def _json(path: Path) -> Iterator[tuple[int, Any]]:
    data = read_json_document(path)
    if isinstance(data, dict):  # {"data": [...]} or {"train": [...]}
        data = next((value for value in data.values() if isinstance(value, list)), [data])
    if not isinstance(data, list):
        raise InputFileError(f"{path}: expected a list of rows, got {type(data).__name__}")
    yield from enumerate(data, start=1)


def _parquet(path: Path) -> Iterator[tuple[int, Any]]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        batches = pq.ParquetFile(path).iter_batches(batch_size=1_024)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputFileError(f"{path}: not a readable Parquet file ({error})") from None
    number = 0
    for batch in batches:
        json_columns = [field.name for field in batch.schema if _holds_json(field.type)]
        for row in batch.to_pylist():
            number += 1
            for name in json_columns:
                row[name] = _decode_json(row[name])
            yield number, row


def _holds_json(data_type) -> bool:
    """A column of Arrow's JSON type, or a list of it (how exports write messages and tools)."""
    import pyarrow as pa

    return isinstance(data_type, pa.JsonType) or (
        pa.types.is_list(data_type) and isinstance(data_type.value_type, pa.JsonType)
    )


def _decode_json(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode_json(element) for element in value]
    return json.loads(value) if isinstance(value, str) else value

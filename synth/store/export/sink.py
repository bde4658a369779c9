"""Write export rows to Parquet or JSON Lines (chosen by the file suffix), whole or not at all."""

import json
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from synth.errors import ConfigError, OutputError

_BATCH_ROWS = 4_096
PARQUET_SUFFIXES = (".parquet",)
JSONL_SUFFIXES = (".jsonl", ".json")


def json_list_type() -> pa.DataType:
    """A list of JSON values (Arrow's canonical `arrow.json` extension): free-form objects, such as
    chat messages with tool-call arguments, without a struct that pads each with the keys of others."""
    return pa.list_(pa.json_(pa.string()))


def _is_json_list(data_type: pa.DataType) -> bool:
    return pa.types.is_list(data_type) and isinstance(data_type.value_type, pa.JsonType)


def check_output(out: Path, force: bool, suffixes: tuple[str, ...] | None = None, why: str = "") -> None:
    if suffixes is not None and out.suffix not in suffixes:
        reason = f" ({why})" if why else ""
        raise ConfigError(f"--out {out}: this format writes {' or '.join(suffixes)} files{reason}; change the suffix")
    if out.exists() and not force:
        raise ConfigError(f"--out {out} already exists; choose another path or pass --force to replace it")


def write_rows(
    rows: Iterable[dict[str, Any]],
    schema: pa.Schema | None,
    out: Path,
    on_empty: Callable[[], None] | None = None,
    check: Callable[[], None] | None = None,
) -> int:
    """Stream rows into `out` (.parquet with `schema`, or .jsonl); returns the row count. With no
    rows, `on_empty` runs (and raises, saying why) before anything replaces `out`; so does `check`
    after any rows (a refusal that can only be known once every row is made)."""
    temporary = out.with_name(f".{out.name}.tmp")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        count = (
            _write_parquet(rows, schema, temporary) if out.suffix in PARQUET_SUFFIXES else _write_jsonl(rows, temporary)
        )
        if count == 0 and on_empty is not None:
            on_empty()
        if check is not None:
            check()
        os.replace(temporary, out)
    except OSError as error:  # unwritable folder, full disk, read-only file system: nothing is left half-written
        raise OutputError(
            f"cannot write --out {out}: {error.strerror or error}; choose a writable path with free space "
            "(nothing was written)"
        ) from None
    finally:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass
    return count


def _table(batch: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    columns = []
    for field in schema:
        values = [row.get(field.name) for row in batch]
        if _is_json_list(field.type):
            storage = pa.array(
                [None if value is None else [json.dumps(v, ensure_ascii=False) for v in value] for value in values],
                type=pa.list_(pa.string()),
            )
            columns.append(
                pa.ListArray.from_arrays(
                    storage.offsets,
                    pa.ExtensionArray.from_storage(field.type.value_type, storage.values),
                    mask=storage.is_null(),
                )
            )
        else:
            columns.append(pa.array(values, type=field.type))
    return pa.Table.from_arrays(columns, schema=schema)


def _with_json_features(schema: pa.Schema) -> pa.Schema:
    """Tell `datasets` which columns hold JSON objects (its `Json` feature), so it decodes them."""
    features = {
        field.name: {"feature": {"_type": "Json"}, "_type": "List"} for field in schema if _is_json_list(field.type)
    }
    if not features:
        return schema
    return schema.with_metadata(
        {**(schema.metadata or {}), b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    )


def _write_parquet(rows: Iterable[dict[str, Any]], schema: pa.Schema, path: Path) -> int:
    count = 0
    schema = _with_json_features(schema)
    with pq.ParquetWriter(path, schema, compression="zstd") as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= _BATCH_ROWS:
                writer.write_table(_table(batch, schema))
                count += len(batch)
                batch = []
        writer.write_table(_table(batch, schema))
        count += len(batch)
    return count


def _write_jsonl(rows: Iterable[dict[str, Any]], path: Path) -> int:
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count

"""Parquet shards: `part-00000.parquet` files, each written whole (temp file, then rename)."""

import os
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from synth.schemas import Record
from synth.settings import Settings
from synth.store.arrow_schema import to_row
from synth.store.tables import table_schema

ROWS_PER_SHARD = 50_000
_BATCH_ROWS = 2_000


def shard_name(index: int) -> str:
    return f"part-{index:05d}.parquet"


def write_parquet_atomically(table: pa.Table, path: Path) -> None:
    """Write to a temporary name and rename, so a reader never sees a half-written file."""
    temporary = path.with_name(f".{path.name}.tmp")
    pq.write_table(table, temporary, compression="zstd")
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, path)


def finished_folders(root: Path) -> list[Path]:
    """The folders under `root` whose `run.parquet` is written (an eval's or an audit's: written last,
    so a folder without it is unfinished), by name."""
    return sorted(path.parent for path in root.glob("*/run.parquet")) if root.exists() else []


def schema_shard(settings: Settings, table: str, schema: pa.Schema | None = None) -> Path:
    """An empty shard holding the current schema of `table` (a version table's, unless `schema` is
    given); (re)written when the schema changed."""
    path = settings.datasets_dir / ".schema" / f"{table}.parquet"
    wanted = schema if schema is not None else table_schema(table)
    if not path.exists() or not pq.read_schema(path).equals(wanted):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet_atomically(wanted.empty_table(), path)
    return path


class ShardWriter:
    """Streams records of one table into numbered shards of at most `rows_per_shard` rows.

    Always leaves at least one (possibly empty) shard, so every version has every table.
    """

    def __init__(self, folder: Path, table: str, dataset: str, version: int, rows_per_shard: int = ROWS_PER_SHARD):
        self.folder = folder
        self.schema = table_schema(table)
        self.prefix = {"dataset": dataset, "version": version}
        self.rows_per_shard = rows_per_shard
        self.rows = 0
        self._shards = 0
        self._batch: list[dict] = []
        self._writer: pq.ParquetWriter | None = None
        self._rows_in_shard = 0
        folder.mkdir(parents=True, exist_ok=True)

    def write(self, record: Record) -> None:
        self._batch.append({**self.prefix, **to_row(record)})
        self.rows += 1
        if len(self._batch) >= _BATCH_ROWS:
            self._flush()

    def write_all(self, records: Iterable[Record]) -> None:
        for record in records:
            self.write(record)

    def _flush(self) -> None:
        while self._batch:
            writer = self._writer or self._open_shard()
            room = self.rows_per_shard - self._rows_in_shard
            chunk, self._batch = self._batch[:room], self._batch[room:]
            writer.write_table(pa.Table.from_pylist(chunk, schema=self.schema))
            self._rows_in_shard += len(chunk)
            if self._rows_in_shard >= self.rows_per_shard:
                self._close_shard()

    def _open_shard(self) -> pq.ParquetWriter:
        self._path = self.folder / shard_name(self._shards)
        self._temporary = self._path.with_name(f".{self._path.name}.tmp")
        self._writer = pq.ParquetWriter(self._temporary, self.schema, compression="zstd")
        self._rows_in_shard = 0
        return self._writer

    def _close_shard(self) -> None:
        if self._writer is not None:
            self._writer.close()
        with open(self._temporary, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(self._temporary, self._path)
        self._writer = None
        self._shards += 1

    def close(self) -> int:
        """Finish the last shard; returns the number of rows written."""
        self._flush()
        if self._writer is not None:
            self._close_shard()
        if self._shards == 0:
            write_parquet_atomically(self.schema.empty_table(), self.folder / shard_name(0))
            self._shards = 1
        return self.rows

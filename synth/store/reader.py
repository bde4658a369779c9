"""Read a published version's records back from its shards (no catalog lock held while reading)."""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, overload

import pyarrow as pa

from synth.errors import CatalogError, ConfigError
from synth.schemas import DatasetVersion, DifficultyLabel, FilterVerdict, Item, Record, SolverAttempt, Trajectory
from synth.settings import Settings
from synth.store.arrow_schema import from_row
from synth.store.health import problems
from synth.store.tables import TABLES

_BATCH_ROWS = 4_096


def shard_glob(settings: Settings, version: DatasetVersion, table: str) -> Path:
    """The version's parts of `table`, once its files are known whole (CatalogError if damaged)."""
    found = problems(settings.home.absolute(), version)
    if found:
        more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
        raise CatalogError(
            f"{version.ref} is damaged: {found[0]}{more}; `synth datasets verify {version.ref}` lists "
            "the damage; other versions are unaffected"
        )
    return settings.home.absolute() / version.path / table / "*.parquet"


@contextmanager
def open_reader(
    settings: Settings, version: DatasetVersion, table: str, where: str | None = None
) -> Iterator[pa.RecordBatchReader]:
    """Arrow batches of `table` in stored order, optionally filtered by a SQL predicate on its columns."""
    import duckdb

    path = str(shard_glob(settings, version, table)).replace("'", "''")
    sql = (
        "select * exclude (filename, file_row_number) from "
        f"(select * from read_parquet('{path}', filename = true, file_row_number = true)"
    )
    if where:
        sql += f" where {where}"
    sql += " order by filename, file_row_number)"
    connection = duckdb.connect()
    try:
        try:
            relation = connection.sql(sql)  # binds: a bad predicate fails here, before any part is read
        except duckdb.Error as error:
            if not where:
                raise
            raise ConfigError(f"bad --where for {table}: {str(error).splitlines()[0]}") from None
        try:
            reader = relation.to_arrow_reader(_BATCH_ROWS)
        except duckdb.Error as error:
            raise _unreadable(version, error) from None
        yield pa.RecordBatchReader.from_batches(reader.schema, _checked(reader, version))
    finally:
        connection.close()


def _checked(reader: pa.RecordBatchReader, version: DatasetVersion) -> Iterator[pa.RecordBatch]:
    """The reader's batches; a part that fails to read (DuckDB reports it through the Arrow stream)
    is one line naming the version, never a traceback or a --where the user did not give."""
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except (pa.ArrowException, OSError) as error:
            raise _unreadable(version, error) from None
        yield batch


def _unreadable(version: DatasetVersion, error: Exception) -> CatalogError:
    return CatalogError(
        f"{version.ref} cannot be read: {str(error).splitlines()[0]}; `synth datasets verify {version.ref}` checks "
        "its parts against what publishing recorded"
    )


@overload
def iter_records(
    settings: Settings, version: DatasetVersion, table: Literal["items"], where: str | None = None
) -> Iterator[Item]: ...
@overload
def iter_records(
    settings: Settings, version: DatasetVersion, table: Literal["trajectories"], where: str | None = None
) -> Iterator[Trajectory]: ...
@overload
def iter_records(
    settings: Settings, version: DatasetVersion, table: Literal["attempts"], where: str | None = None
) -> Iterator[SolverAttempt]: ...
@overload
def iter_records(
    settings: Settings, version: DatasetVersion, table: Literal["labels"], where: str | None = None
) -> Iterator[DifficultyLabel]: ...
@overload
def iter_records(
    settings: Settings, version: DatasetVersion, table: Literal["verdicts"], where: str | None = None
) -> Iterator[FilterVerdict]: ...
@overload
def iter_records(
    settings: Settings, version: DatasetVersion, table: str, where: str | None = None
) -> Iterator[Any]: ...


def iter_records(settings: Settings, version: DatasetVersion, table: str, where: str | None = None) -> Iterator[Any]:
    """Validated records of `table` in stored order (typed by table: `items` gives `Item`s)."""
    model: type[Record] = TABLES[table]
    with open_reader(settings, version, table, where) as reader:
        for batch in reader:
            for row in batch.to_pylist():
                yield from_row(model, row)


def read_columns(settings: Settings, version: DatasetVersion, table: str, columns: list[str]) -> list[tuple]:
    """Rows of a few columns of `table`, without validating whole records (cheap on large versions)."""
    import duckdb

    path = str(shard_glob(settings, version, table)).replace("'", "''")
    selected = ", ".join(f'"{column}"' for column in columns)
    with duckdb.connect() as connection:
        try:
            return connection.sql(f"select {selected} from read_parquet('{path}')").fetchall()
        except duckdb.Error as error:  # the SQL is ours: a failure is a part that does not read
            raise _unreadable(version, error) from None

"""Reading a query's result back into Python, bounded: Arrow batches whose bytes are counted before
any becomes Python values, DuckDB's errors told apart whether they came while the query was prepared
or while it ran, and the query run on a worker thread so Ctrl-C always reaches the main thread."""

import threading
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any, TypeVar

from synth.errors import CatalogError
from synth.store.sandbox import Bounds

T = TypeVar("T")
BATCH_ROWS = 1_024
"""Rows per Arrow batch read back: one batch is the most a result holds beyond what it keeps."""


def in_worker(interrupt: Callable[[], None], work: Callable[[], T]) -> T:
    """`work()` run on a worker thread while this thread waits: Ctrl-C then always reaches Python in
    the main thread (DuckDB swaps in its own SIGINT handler around every statement run there, and a
    signal landing in that swap was lost: on a loaded machine Ctrl-C during a query's setup went
    unheard and the query ran on), calls `interrupt()` and is raised here as KeyboardInterrupt."""
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def run() -> None:
        try:
            outcome["value"] = work()
        except BaseException as error:  # handed to the waiting thread, raised there
            outcome["error"] = error
        finally:
            done.set()

    threading.Thread(target=run, name="synth-query", daemon=True).start()
    try:
        while not done.wait(0.1):  # an Event, not Thread.join: Python 3.11 marks a thread stopped when
            pass  # Ctrl-C lands in join, and the connection would be closed under the running query
    except KeyboardInterrupt:
        interrupt()
        done.wait(30)
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def fetch(connection, sql: str, limit: int, bounds: Bounds) -> tuple[list[str], list[tuple], int]:
    """Columns, the first `limit` rows and the row total of `sql`. Rows come as Arrow batches and
    become Python values only once their bytes are known to fit `bounds.result_bytes` (a single
    300 MB cell is refused, never copied into strings); rows past the limit are only counted."""
    relation = connection.sql(sql)
    if relation is None:  # a statement with no result
        return [], [], 0
    columns = list(relation.columns)
    convert = [_PYTHON_VALUE.get(kind.id) for kind in relation.types]
    rows: list[tuple] = []
    total = kept_bytes = 0
    for batch in _batches(relation):
        total += batch.num_rows
        wanted = min(batch.num_rows, limit - len(rows))
        if wanted <= 0:
            continue
        kept = batch.slice(0, wanted)
        kept_bytes += kept.nbytes
        if kept_bytes > bounds.result_bytes:
            raise CatalogError(
                f"the result is over {bounds.result_bytes >> 20} MB in its first {len(rows) + wanted:,} rows; select "
                "fewer or shorter columns (left(question, 200)), or fewer rows (--limit, a where clause)"
            )
        values = [column.to_pylist() for column in kept.columns]
        for index, how in enumerate(convert):
            if how is not None:
                values[index] = [None if value is None else how(value) for value in values[index]]
        rows += zip(*values, strict=True)
    return columns, rows, total


class ReadFailed(Exception):
    """The query was prepared and failed while it ran: `error`, the DuckDB error."""

    def __init__(self, error: Exception):
        self.error = error


def _batches(relation) -> Iterator[Any]:
    """The relation's result as Arrow batches. A failure while it runs is raised as ReadFailed of the
    DuckDB error, also when DuckDB reports it through the Arrow stream (as an ArrowException or
    OSError carrying its message)."""
    import duckdb
    import pyarrow as pa

    try:
        reader = relation.to_arrow_reader(BATCH_ROWS)  # runs the query up to its first batch
    except (duckdb.InterruptException, duckdb.OutOfMemoryException, duckdb.PermissionException):
        raise
    except duckdb.Error as error:
        raise ReadFailed(error) from None

    kinds = {
        "INTERRUPT Error": duckdb.InterruptException,
        "Out of Memory Error": duckdb.OutOfMemoryException,
        "Permission Error": duckdb.PermissionException,
    }
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except (pa.ArrowException, OSError) as error:  # the C stream reports an error as an OSError
            message = str(error)
            kind = next((kind for prefix, kind in kinds.items() if message.startswith(prefix)), None)
            if kind is not None:
                raise kind(message) from None
            raise ReadFailed(duckdb.Error(message)) from None
        yield batch


_PYTHON_VALUE: dict[str, Callable[[Any], Any]] = {
    "hugeint": int,  # Arrow carries it as a decimal (sum() of integers is one)
    "uhugeint": int,
    "interval": lambda value: timedelta(
        days=30 * value.months + value.days, microseconds=value.nanoseconds // 1_000
    ),  # as DuckDB's own Python values (a month is 30 days)
    "map": dict,  # Arrow gives a map as its (key, value) pairs
}
"""Top-level column types whose Arrow values differ from the values DuckDB's Python API gives."""

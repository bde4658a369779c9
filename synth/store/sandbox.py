"""Where a user's query runs: a DuckDB database of its own, in memory, that no other connection shares.

DuckDB keeps one database instance per file per process, and settings such as
`enable_external_access` or `lock_configuration` belong to the instance: set on a connection to the
catalog file, they reach every other connection to it in the process (a page of `synth browse`
then fails to open the catalog beside a console query). So a query never runs on the catalog
file. The catalog is opened read-only for the milliseconds it takes to copy its own small tables
(versions, runs), then closed; the query runs on a private in-memory database holding those copies
and views over the Parquet parts, locked down as `sandbox` says. A publish in another process
waits for nobody's query.
"""

import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.schemas import DatasetVersion
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.catalog_index import CATALOG_DDL, CATALOG_TABLES
from synth.store.views import create_views, view_files


@dataclass(frozen=True)
class Bounds:
    """What one query may cost this process: DuckDB's memory, its spill to disk, the query's text,
    and the bytes of the rows handed back."""

    memory: str = "2GB"
    spill: str = "4GB"
    """Temporary files a sort or join may write, in a private folder removed after the query."""
    text_chars: int = 100_000
    result_bytes: int = 256 << 20
    """Arrow bytes of the rows returned (the rows beyond the row limit are counted, not kept)."""
    progress_bar: bool = False
    """DuckDB's own progress bar on a long query, printed to stdout: for a terminal only."""


CLI_BOUNDS = Bounds()
WEB_BOUNDS = Bounds(memory="1GB", spill="1GB", text_chars=20_000, result_bytes=8 << 20)
"""The web console's: a page is for reading, and a request must not hold the server's memory."""


def sandbox(connection, readable: Path, bounds: Bounds, spill_folder: Path) -> None:
    """Limit `connection` (a private in-memory database) to reading files under `readable`, offline,
    within `bounds`, spilling only into `spill_folder`; its settings locked."""
    folder = str(readable.absolute()).replace("'", "''")
    spill = str(spill_folder).replace("'", "''")
    for statement in (
        f"set allowed_directories = ['{folder}/']",
        f"set temp_directory = '{spill}'",
        f"set max_temp_directory_size = '{bounds.spill}'",
        "set enable_external_access = false",
        "set autoinstall_known_extensions = false",
        "set autoload_known_extensions = false",
        "set allow_community_extensions = false",
        f"set memory_limit = '{bounds.memory}'",
        f"set enable_progress_bar = {str(bounds.progress_bar).lower()}",
        "set lock_configuration = true",
    ):
        connection.execute(statement)


@contextmanager
def private_database(settings: Settings, bounds: Bounds, prepare: Callable[[Any], None] | None = None) -> Iterator:
    """A fresh in-memory DuckDB under `sandbox` (after `prepare(connection)` filled it), closed and
    its spill removed on exit."""
    import duckdb

    spill = Path(tempfile.mkdtemp(prefix="synth-query-spill-"))
    connection = duckdb.connect(":memory:")
    try:
        if prepare is not None:
            prepare(connection)
        sandbox(connection, settings.datasets_dir, bounds, spill)
        yield connection
    finally:
        connection.close()
        shutil.rmtree(spill, ignore_errors=True)


def catalog_copy(settings: Settings) -> tuple[list[DatasetVersion], dict[str, Any]]:
    """The published versions and the catalog's own tables as Arrow, read in one short read-only open."""
    with Catalog.open(settings, read_only=True) as catalog:
        versions = catalog.versions()
        present = {row[0] for row in catalog.connection.execute("select table_name from duckdb_tables()").fetchall()}
        tables = {
            name: catalog.connection.sql(f"select * from {name}").to_arrow_table()
            for name in CATALOG_TABLES
            if name in present
        }
    return versions, tables


@contextmanager
def query_database(
    settings: Settings, bounds: Bounds, excluded: frozenset[str] = frozenset()
) -> Iterator[tuple[Any, list[DatasetVersion]]]:
    """A private database holding the catalog's tables and the views over every whole published
    version (but those whose ref is in `excluded`), sandboxed; yields it and the versions it shows."""
    versions, tables = catalog_copy(settings)
    versions = [version for version in versions if version.ref not in excluded]
    files = view_files(settings, versions)  # the part checks run here, with the catalog closed

    def fill(connection) -> None:
        connection.execute(CATALOG_DDL)
        for name, table in tables.items():
            connection.register("catalog_copy", table)
            connection.execute(f"insert into {name} by name select * from catalog_copy")
            connection.unregister("catalog_copy")
        create_views(connection, files)

    with private_database(settings, bounds, fill) as connection:
        yield connection, versions

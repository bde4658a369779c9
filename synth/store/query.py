"""Read-only SQL over the catalog, for `synth sql` and anyone embedding synth.

Two fences. Statement types: only SELECT (DESCRIBE, SHOW, SUMMARIZE parse as SELECT), EXPLAIN
without ANALYZE (which would run the statement) and PRAGMA. And DuckDB's own sandbox, set on the
connection before the query runs and then locked: no file outside the datasets folder (so no
`read_text('/etc/shadow')`, no COPY ... TO anywhere), no network, no extension installed or
loaded. The type check gives the clearer message; the sandbox is what holds if it is ever fooled.
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.errors import CatalogError
from synth.settings import Settings
from synth.store.catalog import Catalog

EXPLAIN_ANALYZE = re.compile(r"\banaly[sz]e\b", re.IGNORECASE)
"""In an EXPLAIN statement, anywhere (comments could hide it from a prefix match): it would run the statement."""
READ_ONLY_STATEMENTS = {"SELECT", "EXPLAIN", "PRAGMA"}
"""DESCRIBE, SHOW and SUMMARIZE parse as SELECT; everything else could write or reach outside."""


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]


def check_read_only(sql: str) -> None:
    import duckdb

    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:
        raise CatalogError(f"SQL error: {_first_line(error)}") from None
    if not statements:
        raise CatalogError('no SQL statement given; e.g. synth sql "select * from versions"')
    for statement in statements:
        kind = statement.type.name
        if kind == "EXPLAIN" and EXPLAIN_ANALYZE.search(statement.query):
            raise CatalogError("synth sql is read-only: EXPLAIN ANALYZE runs its statement and is refused; use EXPLAIN")
        if kind not in READ_ONLY_STATEMENTS:
            raise CatalogError(
                f"synth sql is read-only: {kind} statements are refused; "
                "run SELECT queries (the catalog changes only through synth generate)"
            )


def run_query(settings: Settings, sql: str) -> QueryResult:
    """Run read-only SQL; the last statement's result is returned."""
    import duckdb

    check_read_only(sql)
    with Catalog.open(settings, read_only=True) as catalog:
        sandbox(catalog.connection, settings.datasets_dir)
        try:
            cursor = catalog.connection.execute(sql)
            columns = [column[0] for column in cursor.description or []]
            rows = cursor.fetchall() if cursor.description else []
        except duckdb.PermissionException as error:
            raise CatalogError(
                f"refused: {_first_line(error).removeprefix('Permission Error: ')}; synth sql reads the catalog's "
                f"views and the Parquet files under {settings.datasets_dir}, nothing else (no network)"
            ) from None
        except duckdb.Error as error:
            raise CatalogError(f"SQL error: {_first_line(error)}") from None
    return QueryResult(columns, rows)


def sandbox(connection, readable: Path) -> None:
    """Limit `connection` to reading files under `readable`, offline, with its settings locked."""
    folder = str(readable.absolute()).replace("'", "''")
    for statement in (
        f"set allowed_directories = ['{folder}/']",
        "set enable_external_access = false",
        "set autoinstall_known_extensions = false",
        "set autoload_known_extensions = false",
        "set allow_community_extensions = false",
        "set lock_configuration = true",
    ):
        connection.execute(statement)


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0]

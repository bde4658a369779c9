"""Read-only SQL over the catalog, for `synth sql` and anyone embedding synth.

A sandbox by construction, in layers, each an allow-list:

- one statement, of a read-only kind: SELECT (DESCRIBE, SHOW and SUMMARIZE parse as SELECT),
  EXPLAIN without ANALYZE, and the PRAGMAs that only describe (`READ_ONLY_PRAGMAS`); a PRAGMA such
  as `import_database` runs SQL from files and is refused with every other statement;
- in that statement, only the table functions in `TABLE_FUNCTIONS` (read DuckDB's own parse tree,
  `json_serialize_sql`, so what is checked is what runs): no `query('copy ...')`, no `read_text`,
  no `glob`, no `duckdb_settings()`;
- DuckDB's sandbox on the connection, locked before the query runs: files under the datasets
  folder only, no network, no extension installed or loaded, a memory cap;
- bounds on what it costs and shows: at most `limit` rows returned (the total counted by streaming
  the rest), a time limit after which the query is interrupted, Ctrl-C as one line, and the data
  root's absolute path shown as $SYNTH_HOME.
"""

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.errors import CatalogError
from synth.redact import map_strings
from synth.settings import Settings
from synth.store.catalog import Catalog

EXPLAIN_ANALYZE = re.compile(r"\banaly[sz]e\b", re.IGNORECASE)
"""In an EXPLAIN statement, anywhere (comments could hide it from a prefix match): it would run the statement."""
READ_ONLY_STATEMENTS = {"SELECT", "EXPLAIN", "PRAGMA"}
READ_ONLY_PRAGMAS = {
    "show_tables",
    "show_tables_expanded",
    "table_info",
    "show",
    "version",
    "platform",
    "functions",
    "collations",
    "database_size",
    "storage_info",
}
"""PRAGMAs that describe the catalog and nothing else (import_database, for one, runs files' SQL)."""
TABLE_FUNCTIONS = {
    "range",
    "generate_series",
    "unnest",
    "read_parquet",
    "parquet_scan",
    "parquet_metadata",
    "parquet_schema",
    "parquet_file_metadata",
    "parquet_kv_metadata",
    "duckdb_tables",
    "duckdb_views",
    "duckdb_columns",
    "duckdb_types",
    "duckdb_functions",
    "duckdb_keywords",
    "duckdb_constraints",
    "duckdb_schemas",
    "duckdb_indexes",
    "pragma_table_info",
    "pragma_show",
    "pragma_version",
    "pragma_storage_info",
    "pragma_database_size",
}
"""Table functions a query may use: generators, the store's Parquet, and the catalog's own description."""
DEFAULT_LIMIT = 1_000
DEFAULT_TIMEOUT_S = 60.0
MEMORY_LIMIT = "2GB"
_PRAGMA_NAME = re.compile(r"^\s*(?:--[^\n]*\n|/\*.*?\*/|\s)*pragma\s+([a-z_][a-z0-9_]*)", re.IGNORECASE | re.DOTALL)


@dataclass
class QueryResult:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    total: int | None = None
    """Rows the query gave in all (more than `rows` when the limit cut them)."""

    @property
    def truncated(self) -> bool:
        return self.total is not None and self.total > len(self.rows)


def check_read_only(sql: str) -> None:
    """Refuse anything but one read-only statement using allowed table functions."""
    import duckdb

    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as error:
        raise CatalogError(f"SQL error: {_first_line(error)}") from None
    if not statements:
        raise CatalogError('no SQL statement given; e.g. synth sql "select * from versions"')
    if len(statements) > 1:
        raise CatalogError(
            f"synth sql runs one statement at a time and got {len(statements)}; run each in its own call"
        )
    [statement] = statements
    kind = statement.type.name
    if kind == "EXPLAIN" and EXPLAIN_ANALYZE.search(statement.query):
        raise CatalogError("synth sql is read-only: EXPLAIN ANALYZE runs its statement and is refused; use EXPLAIN")
    if kind not in READ_ONLY_STATEMENTS:
        raise CatalogError(
            f"synth sql is read-only: {kind} statements are refused; "
            "run SELECT queries (the catalog changes only through synth generate)"
        )
    if kind == "PRAGMA":
        found = _PRAGMA_NAME.match(statement.query)
        name = found.group(1).lower() if found else "?"
        if name not in READ_ONLY_PRAGMAS:
            raise CatalogError(
                f"synth sql is read-only: PRAGMA {name} is refused; the PRAGMAs it runs are "
                f"{', '.join(sorted(READ_ONLY_PRAGMAS))}"
            )
        return
    query = statement.query
    if kind == "EXPLAIN":
        query = re.sub(r"^\s*explain\b", "", query, count=1, flags=re.IGNORECASE)
    refused = sorted(set(table_functions(query)) - TABLE_FUNCTIONS)
    if refused:
        raise CatalogError(
            f"synth sql is read-only: the table function {refused[0]}() is refused; it reads the catalog's views, "
            "the Parquet files of the datasets (read_parquet) and generators such as range()"
        )


def table_functions(sql: str) -> list[str]:
    """The table functions a SELECT uses, from DuckDB's own parse tree."""
    import duckdb

    with duckdb.connect() as parser:
        (serialized,) = parser.execute("select json_serialize_sql(?)", [sql]).fetchone() or ("{}",)
        tree = json.loads(serialized)
    if tree.get("error"):
        raise CatalogError(f"SQL error: {tree.get('error_message', 'cannot parse the statement')}")
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "TABLE_FUNCTION":
                found.append(str(node.get("function", {}).get("function_name", "?")).lower())
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(tree)
    return found


def run_query(
    settings: Settings, sql: str, limit: int = DEFAULT_LIMIT, timeout_s: float = DEFAULT_TIMEOUT_S
) -> QueryResult:
    """Run one read-only statement: at most `limit` rows back (and the total), within `timeout_s`."""
    import duckdb

    check_read_only(sql)
    home = Paths(settings.home)
    with Catalog.open(settings, read_only=True) as catalog:
        connection = catalog.connection
        sandbox(connection, settings.datasets_dir)
        timer = threading.Timer(timeout_s, connection.interrupt)
        timer.start()
        try:
            cursor = connection.execute(sql)
            columns = [home.mask(column[0]) for column in cursor.description or []]
            rows, total = [], 0
            while cursor.description:
                batch = cursor.fetchmany(10_000)
                if not batch:
                    break
                total += len(batch)
                rows += batch[: max(0, limit - len(rows))]
        except duckdb.PermissionException as error:
            raise CatalogError(
                f"refused: {home.mask(_first_line(error)).removeprefix('Permission Error: ')}; synth sql reads the "
                "catalog's views and the Parquet files under $SYNTH_HOME/datasets, nothing else (no network)"
            ) from None
        except duckdb.InterruptException:
            why = f"ran past --timeout {timeout_s:g} s" if not timer.is_alive() else "was interrupted"
            raise CatalogError(f"the query {why} and was stopped; narrow it (a where clause, a limit)") from None
        except KeyboardInterrupt:
            connection.interrupt()
            raise CatalogError("the query was interrupted (Ctrl-C); nothing was changed") from None
        except duckdb.Error as error:
            raise CatalogError(f"SQL error: {home.mask(_first_line(error))}") from None
        finally:
            timer.cancel()
    return QueryResult(columns, [tuple(home.mask_value(value) for value in row) for row in rows], total)


class Paths:
    """Shows the data root's absolute path as $SYNTH_HOME, wherever a value holds it."""

    def __init__(self, home: Path):
        self.prefixes = sorted({str(home.absolute()), str(home.resolve())}, key=len, reverse=True)

    def mask(self, text: str) -> str:
        for prefix in self.prefixes:
            text = text.replace(prefix, "$SYNTH_HOME")
        return text

    def mask_value(self, value: Any) -> Any:
        return map_strings(value, self.mask)


def sandbox(connection, readable: Path) -> None:
    """Limit `connection` to reading files under `readable`, offline, with a memory cap, its settings locked."""
    folder = str(readable.absolute()).replace("'", "''")
    for statement in (
        f"set allowed_directories = ['{folder}/']",
        "set enable_external_access = false",
        "set autoinstall_known_extensions = false",
        "set autoload_known_extensions = false",
        "set allow_community_extensions = false",
        f"set memory_limit = '{MEMORY_LIMIT}'",
        "set lock_configuration = true",
    ):
        connection.execute(statement)


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0]

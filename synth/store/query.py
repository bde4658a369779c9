"""Read-only SQL over the catalog, for `synth sql` and anyone embedding synth.

A sandbox by construction, in layers, each an allow-list:

- one statement, of a read-only kind: SELECT (DESCRIBE, SHOW and SUMMARIZE parse as SELECT),
  EXPLAIN without ANALYZE, and the PRAGMAs that only describe (`READ_ONLY_PRAGMAS`); a PRAGMA such
  as `import_database` runs SQL from files and is refused with every other statement;
- in that statement, only the table functions in `TABLE_FUNCTIONS` (read DuckDB's own parse tree,
  `json_serialize_sql`, so what is checked is what runs): no `query('copy ...')`, no `read_text`,
  no `glob`, no `duckdb_settings()`;
- a private in-memory database (`synth.store.sandbox`) with copies of the catalog's tables and views
  over the parts, never the catalog file, under DuckDB's sandbox locked before the query runs:
  files under the datasets folder only, no network, no extension installed or loaded, memory and
  spill caps, spill into a private temporary folder;
- bounds on what it costs and shows: the query's length, at most `limit` rows and `result_bytes`
  returned (the total counted by streaming the rest), a time limit after which the query is
  interrupted, Ctrl-C as one line, and the data root's absolute path shown as $SYNTH_HOME.
"""

import json
import re
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.errors import CatalogError
from synth.redact import map_strings
from synth.schemas import DatasetVersion
from synth.settings import Settings
from synth.store.health import problems, quarantine
from synth.store.result_reader import ReadFailed, fetch, in_worker
from synth.store.sandbox import CLI_BOUNDS, Bounds, query_database

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
SET_OPERATIONS = 1_000
"""Unions (intersects, excepts) a query may have: 1,000 parse in about 0.2 GB."""
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
    settings: Settings,
    sql: str,
    limit: int = DEFAULT_LIMIT,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    bounds: Bounds = CLI_BOUNDS,
) -> QueryResult:
    """Run one read-only statement on a private database (`synth.store.sandbox`): at most `limit` rows
    back (and the total), within `timeout_s` and `bounds`. A version whose part fails to read is
    checked in full: if damaged, it is quarantined and the query runs again without it."""
    running = _Running()

    def work() -> QueryResult:  # every DuckDB call off the main thread, its checks and setup too (in_worker)
        check_text(sql, bounds)
        check_read_only(sql)
        excluded: frozenset[str] = frozenset()
        while True:
            try:
                return _run(settings, sql, limit, timeout_s, bounds, excluded, running)
            except DamagedPart as damaged:
                excluded |= {damaged.ref}

    return in_worker(running.interrupt, work)


class _Running:
    """The connection of the query under way, for Ctrl-C (on the main thread) to interrupt; one that
    comes after Ctrl-C is interrupted as it opens, so a query whose setup was interrupted never runs."""

    def __init__(self) -> None:
        self.connection = None
        self.stopped = threading.Event()
        self._lock = threading.Lock()

    def interrupt(self) -> None:
        with self._lock:
            self.stopped.set()
            if self.connection is not None:
                self.connection.interrupt()

    def opened(self, connection) -> None:
        with self._lock:
            self.connection = connection
        if self.stopped.is_set():
            raise KeyboardInterrupt


class DamagedPart(Exception):
    """A part of version `ref` failed to read and a full check found the version damaged."""

    def __init__(self, ref: str):
        self.ref = ref


def check_text(sql: str, bounds: Bounds) -> None:
    """Refuse, before DuckDB parses it, a query whose parse alone would cost gigabytes: one longer than
    `bounds` allows, or with more than `SET_OPERATIONS` unions (parsing them grows faster than their
    count: 5,000 took 0.86 GB, 20,000 10 GB). DuckDB's tokenizer is linear and cheap."""
    import duckdb

    if len(sql) > bounds.text_chars:
        raise CatalogError(
            f"the query is {len(sql):,} characters, over the {bounds.text_chars:,} a query may have; shorten it "
            "(a long union is a where clause or a join)"
        )
    keywords = (sql[start : start + 9].lower() for start, kind in duckdb.tokenize(sql) if kind.name == "keyword")
    unions = sum(1 for word in keywords if word.startswith(("union", "intersect", "except")))
    if unions > SET_OPERATIONS:
        raise CatalogError(
            f"the query has {unions:,} unions, over the {SET_OPERATIONS:,} a query may have; "
            "select the rows with one where clause (where x in (...)) or a join instead"
        )


def _run(
    settings: Settings,
    sql: str,
    limit: int,
    timeout_s: float,
    bounds: Bounds,
    excluded: frozenset[str],
    running: _Running,
) -> QueryResult:
    import duckdb

    home = Paths(settings.home)
    with query_database(settings, bounds, excluded) as (connection, versions):
        running.opened(connection)
        timer = threading.Timer(timeout_s, connection.interrupt)
        timer.start()
        try:
            try:
                columns, rows, total = fetch(connection, sql, limit, bounds)
            except ReadFailed as failed:  # a part that does not read may be damaged
                damaged = _damaged_version(settings, versions, failed.error)
                if damaged is not None:
                    raise DamagedPart(damaged.ref) from None
                raise failed.error from None
        except duckdb.PermissionException as error:
            raise CatalogError(
                f"refused: {home.mask(_first_line(error)).removeprefix('Permission Error: ')}; synth sql reads the "
                "catalog's views and the Parquet files under $SYNTH_HOME/datasets, nothing else (no network)"
            ) from None
        except duckdb.InterruptException:
            why = f"ran past --timeout {timeout_s:g} s" if not timer.is_alive() else "was interrupted"
            raise CatalogError(f"the query {why} and was stopped; narrow it (a where clause, a limit)") from None
        except duckdb.OutOfMemoryException as error:
            raise CatalogError(
                f"the query needs more than synth sql allows ({bounds.memory} of memory, {bounds.spill} spilled to "
                f"disk): {home.mask(_first_line(error))}; narrow it (fewer columns, a where clause, a limit)"
            ) from None
        except duckdb.Error as error:
            raise CatalogError(f"SQL error: {home.mask(_first_line(error))}") from None
        finally:
            timer.cancel()
    masked = [tuple(home.mask_value(value) for value in row) for row in rows]
    return QueryResult([home.mask(column) for column in columns], masked, total)


def _user_errors() -> tuple[type[Exception], ...]:
    import duckdb

    return (
        duckdb.ParserException,
        duckdb.BinderException,
        duckdb.CatalogException,
        duckdb.ConversionException,
        duckdb.OutOfRangeException,
        duckdb.NotImplementedException,
    )


def _damaged_version(settings: Settings, versions: list[DatasetVersion], error: Exception) -> DatasetVersion | None:
    """The version a failed read came from, if a full check (every part hashed) finds it damaged; it
    is then quarantined (`synth datasets verify` lifts that once the files are restored). The
    versions whose parts the error names are checked; a read error naming no file (a damaged page
    says only "Negative size") has every version checked. None for an error of the query itself."""
    if isinstance(error, _user_errors()):
        return None
    home = settings.home.absolute()
    message = str(error)
    named = [version for version in versions if f"{version.path}/" in message]
    for version in named or versions:
        found = problems(home, version, deep=True)
        if not found:
            continue
        quarantine(home, version, found)
        print(
            f"warning: {version.ref} is damaged: {found[0]}; it is left out of queries and exports "
            f"(`synth datasets verify {version.ref}`)",
            file=sys.stderr,
        )
        return version
    return None


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


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0]

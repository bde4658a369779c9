"""The DuckDB catalog: one row per dataset version, and SQL views over every published shard.

The Parquet shards and each version's `manifest.json` are the source of truth; the catalog is the
index that makes them browsable. Only short-lived connections are opened, because DuckDB lets no
other process open a file (even read-only) while a writer holds it.
"""

import json
import os
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Self

from synth import duckdb_files
from synth.errors import CatalogError, NotFoundError
from synth.schemas import DatasetVersion, RunRecord
from synth.settings import Settings
from synth.store.views import create_views, view_files

SCHEMA_VERSION = 1

CATALOG_DDL = """
create table if not exists catalog_meta (key varchar primary key, value varchar);
create table if not exists versions (
    name varchar not null,
    version integer not null,
    status varchar not null,
    created_at timestamptz not null,
    published_at timestamptz,
    recipe varchar not null,
    config json,
    config_hash varchar not null,
    code_version varchar not null,
    models json,
    kg_snapshot varchar,
    seed bigint,
    parent varchar,
    row_counts json,
    funnel json,
    summary json,
    path varchar not null,
    writer varchar,
    primary key (name, version)
);
create table if not exists runs (
    run_id varchar primary key,
    dataset varchar not null,
    recipe varchar not null,
    status varchar not null,
    started_at timestamptz not null,
    finished_at timestamptz,
    version integer,
    runner varchar,
    flow_run_id varchar,
    ui_url varchar,
    stages json,
    resumed_stages json,
    funnel json,
    summary json,
    error varchar
);
"""

CATALOG_TABLES = ("catalog_meta", "versions", "runs")
"""The catalog's own tables (the rest are views over the Parquet parts)."""

_RUN_JSON_COLUMNS = ("stages", "resumed_stages", "funnel", "summary")

_JSON_COLUMNS = ("config", "models", "row_counts", "funnel", "summary")


def parse_ref(ref: str) -> tuple[str, int | None]:
    """`NAME` or `NAME@VERSION` -> (name, version or None for the latest)."""
    name, sep, version = ref.partition("@")
    if not name:
        raise NotFoundError(f"dataset reference {ref!r} has no name; use NAME or NAME@VERSION")
    if not sep:
        return name, None
    digits = version.removeprefix("v")
    if not digits.isdigit():
        raise NotFoundError(f"bad version in {ref!r}: use NAME@3 (a positive integer)")
    return name, int(digits)


def writer_identity() -> str:
    return f"{os.getpid()}@{socket.gethostname()}"


def _connect(path: Path, read_only: bool, timeout_s: float, ours: bool = False):
    """A connection to the catalog file, waiting up to `timeout_s` while another process writes it.
    DamagedCatalogError only when the error shows the file itself damaged (`shows_damage`): a lock,
    a busy writer or a configuration clash is never damage, and never moves the file."""
    import duckdb

    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return duckdb_files.connect(path, read_only=read_only)
        except duckdb.Error as error:
            message = str(error).splitlines()[0]
            if shows_damage(error, path, ours):
                raise DamagedCatalogError(message) from None
            if not is_lock_error(error):
                raise CatalogError(f"cannot open catalog {path}: {message}; nothing was changed, retry") from None
            if time.monotonic() >= deadline:
                raise CatalogError(
                    f"catalog {path} is busy (another synth process is writing it); "
                    "retry when it finishes, or raise SYNTH_LOCK_TIMEOUT_S"
                ) from None
            time.sleep(0.2)


class DamagedCatalogError(CatalogError):
    """The catalog file itself is damaged: rebuilt from the manifests on open."""


def is_lock_error(error: Exception) -> bool:
    """Another process holds the file (DuckDB's `Could not set lock on file`)."""
    return "could not set lock" in str(error).lower() or "conflicting lock" in str(error).lower()


_DAMAGE = (
    "not a valid duckdb database file",
    "corrupt database file",
    "does not match stored checksum",
    "could not read enough bytes",
)
"""What DuckDB says of a damaged database file (a bad header, a block whose checksum fails, a file
cut short), measured on DuckDB 2.0 by damaging a catalog each way."""


def shows_damage(error: Exception, path: Path, ours: bool = False) -> bool:
    """Whether `error`, raised opening or reading the catalog at `path`, shows that file damaged:
    one of DuckDB's corruption errors, naming this file where the error names one (a damaged Parquet
    part read through a view is the part's problem, not the catalog's), on a file synth may rebuild
    (`_is_duckdb_file`). Configuration clashes, locks, interrupts and full disks are not damage."""
    import duckdb

    message = str(error).lower()
    if not any(sign in message for sign in _DAMAGE) and not isinstance(error, duckdb.SerializationException):
        return False
    named = re.findall(r'file "([^"]+)"', str(error))
    if named and not any(Path(name).absolute() == path.absolute() for name in named):
        return False
    return _is_duckdb_file(path, ours)


def _is_duckdb_file(path: Path, ours: bool = False) -> bool:
    """Whether `path` is a catalog synth may rebuild: DuckDB's magic bytes at offset 8 (a damaged
    catalog keeps them), an empty file (a crash or a full disk left it), or, when `ours` (the data
    root's own `synth.duckdb`, not a file SYNTH_CATALOG names), whatever its first bytes: damage can
    reach the header. A foreign file is left alone. A rebuilt file is moved aside, never deleted."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(12)
    except OSError:
        return False
    return header[8:12] == b"DUCK" or not header or ours


class CatalogIndex:
    """A connection to the catalog file; `synth.store.catalog.Catalog` adds recovery of a damaged
    file (the recovery rebuilds the index through this class, so it cannot live here)."""

    def __init__(self, settings: Settings, connection, read_only: bool):
        self.settings = settings
        self.connection = connection
        self.read_only = read_only

    @classmethod
    @contextmanager
    def open(cls, settings: Settings, *, read_only: bool = False) -> Iterator[Self]:
        path = settings.catalog_path
        if path.exists() and not path.is_file():
            raise CatalogError(f"catalog path {path} is not a file; point SYNTH_CATALOG or SYNTH_HOME elsewhere")
        if not path.exists():
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise CatalogError(f"cannot create data root {path.parent}: {error.strerror}; set SYNTH_HOME") from None
            if read_only:  # a reader of a fresh data root sees an empty catalog
                with cls.open(settings):
                    pass
        try:
            catalog = cls._connected(settings, read_only)
        except DamagedCatalogError as error:
            cls._recover(settings, error)
            catalog = cls._connected(settings, read_only)
        try:
            yield catalog
        finally:
            catalog.connection.close()

    @classmethod
    def _recover(cls, settings: Settings, error: DamagedCatalogError) -> None:
        """What opening a damaged file does: here, fail (see `Catalog`)."""
        raise error

    @classmethod
    def _connected(cls, settings: Settings, read_only: bool) -> Self:
        """An open catalog with its schema checked; DamagedCatalogError if the file is damaged.

        Opening reads only the catalog's own tables: a read-only open builds no views and checks
        no parts, so it holds the file for milliseconds and never blocks a publish for long (a
        query builds its views apart, see `synth.store.query`); the stored views are rebuilt when
        a version is published or the catalog reindexed.
        """
        import duckdb

        path = settings.catalog_path
        ours = settings.catalog is None
        connection = _connect(path, read_only, settings.lock_timeout_s, ours=ours)
        catalog = cls(settings, connection, read_only)
        try:
            home = str(settings.home.absolute()).replace("'", "''")
            connection.execute(f"set file_search_path = '{home}'")  # the stored views' relative paths
            if not read_only:
                catalog._ensure_schema()
            else:
                catalog._check_schema()
        except duckdb.Error as error:
            connection.close()
            if shows_damage(error, path, ours):
                raise DamagedCatalogError(str(error).splitlines()[0]) from None
            raise CatalogError(
                f"cannot read catalog {path}: {str(error).splitlines()[0]}; nothing was changed, retry"
            ) from None
        except BaseException:
            connection.close()
            raise
        return catalog

    def _ensure_schema(self) -> None:
        self.connection.execute(CATALOG_DDL)
        self.connection.execute(
            "insert or ignore into catalog_meta values ('schema_version', ?)", [str(SCHEMA_VERSION)]
        )
        self._check_schema()
        if not self.connection.execute("select count(*) from duckdb_views() where view_name = 'items'").fetchone()[0]:
            self._refresh_views()  # a new catalog: plain DuckDB finds the (empty) views from the start

    def _check_schema(self) -> None:
        import duckdb

        try:
            row = self.connection.execute("select value from catalog_meta where key = 'schema_version'").fetchone()
        except duckdb.CatalogException:
            row = None
        if row is None:
            raise CatalogError(
                f"{self.settings.catalog_path} is a DuckDB file but not a synth catalog; "
                "point SYNTH_CATALOG at a synth catalog or at a new path"
            )
        if int(row[0]) > SCHEMA_VERSION:
            raise CatalogError(
                f"catalog {self.settings.catalog_path} has schema {row[0]}, newer than this synth "
                f"understands ({SCHEMA_VERSION}); upgrade synth"
            )

    # ---- versions -------------------------------------------------------------------------------

    def versions(self, name: str | None = None, *, include_unpublished: bool = False) -> list[DatasetVersion]:
        sql = "select * from versions where (? is null or name = ?)"
        if not include_unpublished:
            sql += " and status = 'published'"
        cursor = self.connection.execute(sql + " order by name, version", [name, name])
        columns = [column[0] for column in cursor.description]
        return [self._to_version(dict(zip(columns, row))) for row in cursor.fetchall()]

    @staticmethod
    def _to_version(row: dict[str, Any]) -> DatasetVersion:
        for column in _JSON_COLUMNS:
            row[column] = json.loads(row[column]) if row[column] is not None else None
        return DatasetVersion.model_validate({key: value for key, value in row.items() if value is not None})

    def resolve(self, ref: str) -> DatasetVersion:
        """The published version a `NAME[@VERSION]` reference names, or a NotFoundError saying what exists."""
        name, number = parse_ref(ref)
        published = self.versions(name)
        if not published:
            names = sorted({version.name for version in self.versions()})
            known = f"known datasets: {', '.join(names)}" if names else "no datasets are published yet"
            raise NotFoundError(f"no dataset named {name!r} ({known}); see `synth datasets list`")
        if number is None:
            return published[-1]
        for version in published:
            if version.version == number:
                return version
        numbers = ", ".join(str(version.version) for version in published)
        raise NotFoundError(f"{name} has no published version {number} (published: {numbers})")

    def reserve(self, version: DatasetVersion) -> DatasetVersion:
        """Claim the next version number for `version.name`; numbers of failed runs are never reused."""
        self._require_writable()
        self.connection.execute("begin transaction")
        try:
            (latest,) = self.connection.execute(
                "select coalesce(max(version), 0) from versions where name = ?", [version.name]
            ).fetchone()
            latest = max(latest, self._highest_folder(version.name))  # a folder the catalog lost still counts
            reserved = version.model_copy(
                update={
                    "version": latest + 1,
                    "status": "pending",
                    "path": f"datasets/{version.name}/v{latest + 1}",
                    "writer": writer_identity(),
                }
            )
            self._insert(reserved)
            self.connection.execute("commit")
        except BaseException:
            self.connection.execute("rollback")
            raise
        return reserved

    def _highest_folder(self, name: str) -> int:
        """The highest `vN` folder of dataset `name` on disk, whatever the catalog knows: a version
        whose manifest and catalog row were both lost keeps its number, so a publish never lands
        in a folder that holds data."""
        numbers = [
            int(folder.name[1:])
            for folder in (self.settings.datasets_dir / name).glob("v*")
            if folder.name[1:].isdigit() and folder.is_dir()
        ]
        return max(numbers, default=0)

    def _insert(self, version: DatasetVersion) -> None:
        row = version.model_dump(mode="json")
        for column in _JSON_COLUMNS:
            row[column] = json.dumps(row[column], sort_keys=True)
        columns = list(row)
        placeholders = ", ".join("?" for _ in columns)
        self.connection.execute(
            f"insert into versions ({', '.join(columns)}) values ({placeholders})", list(row.values())
        )

    def mark_published(self, version: DatasetVersion) -> DatasetVersion:
        """Make a fully written version visible, in one transaction with the views that show it."""
        self._require_writable()
        published = version.model_copy(update={"status": "published", "published_at": datetime.now(UTC)})
        self.connection.execute("begin transaction")
        try:
            self.connection.execute(
                "delete from versions where name = ? and version = ?", [version.name, version.version]
            )
            self._insert(published)
            self._refresh_views()
            self.connection.execute("commit")
        except BaseException:
            self.connection.execute("rollback")
            raise
        return published

    def mark_failed(self, version: DatasetVersion, reason: str) -> None:
        """Keep the number reserved (so it is never reused) and say why the run did not publish."""
        self._require_writable()
        summary = {**version.summary, "failure": reason}
        self.connection.execute(
            "update versions set status = 'failed', summary = ? where name = ? and version = ?",
            [json.dumps(summary, sort_keys=True), version.name, version.version],
        )

    def record_run(self, run: RunRecord) -> None:
        """Insert or replace the row of one run."""
        self._require_writable()
        row = run.model_dump(mode="json")
        for column in _RUN_JSON_COLUMNS:
            row[column] = json.dumps(row[column], sort_keys=True)
        self.connection.execute("begin transaction")
        try:
            self.connection.execute("delete from runs where run_id = ?", [run.run_id])
            self.connection.execute(
                f"insert into runs ({', '.join(row)}) values ({', '.join('?' for _ in row)})", list(row.values())
            )
            self.connection.execute("commit")
        except BaseException:
            self.connection.execute("rollback")
            raise

    def runs(self, dataset: str | None = None, limit: int = 50) -> list[RunRecord]:
        """Newest first."""
        if not self._has_runs_table():
            return []
        where, parameters = ("where dataset = ?", [dataset]) if dataset else ("", [])
        cursor = self.connection.execute(
            f"select * from runs {where} order by started_at desc limit {int(limit)}", parameters
        )
        return [self._to_run(dict(zip([column[0] for column in cursor.description], row))) for row in cursor.fetchall()]

    def _has_runs_table(self) -> bool:
        """A catalog made before runs were recorded, opened read-only, has none yet."""
        return bool(
            self.connection.execute(
                "select count(*) from information_schema.tables where table_name = 'runs'"
            ).fetchone()[0]
        )

    def run(self, run_id: str) -> RunRecord:
        if not self._has_runs_table():
            raise NotFoundError(f"no run {run_id!r}; `synth runs list` shows them")
        cursor = self.connection.execute(
            "select * from runs where run_id = ? or run_id like ? order by started_at desc", [run_id, f"{run_id}%"]
        )
        rows = cursor.fetchall()
        if not rows:
            raise NotFoundError(f"no run {run_id!r}; `synth runs list` shows them")
        return self._to_run(dict(zip([column[0] for column in cursor.description], rows[0])))

    @staticmethod
    def _to_run(row: dict[str, Any]) -> RunRecord:
        for column in _RUN_JSON_COLUMNS:
            if isinstance(row.get(column), str):
                row[column] = json.loads(row[column])
        return RunRecord.model_validate({key: value for key, value in row.items() if value is not None})

    def register(self, version: DatasetVersion) -> None:
        """Insert a version found on disk (reindexing after the catalog file was lost)."""
        self._require_writable()
        self._insert(version)

    def _require_writable(self) -> None:
        if self.read_only:
            raise CatalogError("catalog opened read-only")

    # ---- views ----------------------------------------------------------------------------------

    def refresh_views(self) -> None:
        """Rebuild the stored views (see synth.store.views) over the versions published now. They name
        files relative to the data root (each connection sets DuckDB's file_search_path to it), so
        a moved or copied root works, for plain DuckDB too when run from the root."""
        self._require_writable()
        self._refresh_views()

    def _refresh_views(self) -> None:
        home = self.settings.home.absolute()
        create_views(self.connection, view_files(self.settings, self.versions()), relative_to=home)

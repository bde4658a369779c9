"""Publish a dataset version atomically: all of it becomes visible at once, or none of it does.

Steps, under the dataset's publish lock: reserve the next number in the catalog (so a crashed run
never has its number reused), write every table's shards into a hidden staging folder, rename it
into place, then flip the catalog row to published and refresh the views in one transaction. A
crash before the last step leaves at most a pending row and a folder no view reads; earlier
versions are untouched.

Publishing is idempotent per run: a run killed anywhere in publish and rerun finds its own
version (by `run_id` in the summary) and finishes that one instead of making a second: a
published one is returned as is, a fully renamed one is flipped to published, a pending one
without its folder is marked failed and the run publishes afresh. Staging folders left by killed
publishes are removed the next time the dataset is published.

A data root in a bucket publishes through it instead (synth.store.bucket_root): no rename exists
there, so the version is committed by a conditional put of its manifest.
"""

import os
import shutil
import sys
import uuid
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path

from pydantic import Field

from synth.errors import CatalogError, ConfigError
from synth.hashing import content_hash
from synth.schemas import DatasetVersion, FunnelStage, JsonDict, Record
from synth.schemas.base import NonBlank
from synth.settings import Settings
from synth.store.bucket_root import publish_to_bucket
from synth.store.catalog import Catalog
from synth.store.health import remember, write_parts
from synth.store.locks import acquire
from synth.store.manifest import MANIFEST, read_manifest, write_manifest
from synth.store.shards import ShardWriter
from synth.store.tables import TABLES
from synth.version import code_version

PUBLISH_WAIT_S = 600.0
"""How long a publish waits for another process publishing the same dataset."""


class VersionSpec(Record):
    """What a run knows about the version it is about to publish (the store adds number and counts)."""

    name: NonBlank
    recipe: NonBlank
    config: JsonDict = Field(default_factory=dict)
    models: dict[str, str] = Field(default_factory=dict)
    kg_snapshot: str | None = None
    seed: int | None = None
    parent: str | None = None
    funnel: list[FunnelStage] = Field(default_factory=list)
    summary: JsonDict = Field(default_factory=dict)

    def draft(self) -> DatasetVersion:
        return DatasetVersion(
            **self.model_dump(),
            version=1,
            status="pending",
            created_at=datetime.now(UTC),
            config_hash=content_hash(self.config),
            code_version=code_version(),
            path="",
        )


def validate_dataset_name(name: str) -> str:
    allowed = name.replace("-", "").replace("_", "").replace(".", "")
    if not name or not allowed.isalnum() or not allowed.isascii() or name.startswith("."):
        raise ConfigError(
            f"dataset name {name!r} is not allowed: use letters, digits, '-', '_' and '.', not starting with '.'"
        )
    return name


def publish_version(settings: Settings, spec: VersionSpec, tables: Mapping[str, Iterable[Record]]) -> DatasetVersion:
    """Write `tables` (table name -> records) as a new version of `spec.name` and publish it."""
    validate_dataset_name(spec.name)
    unknown = sorted(set(tables) - set(TABLES))
    if unknown:
        raise ConfigError(f"unknown tables {unknown}; a version holds {sorted(TABLES)}")

    if settings.bucket is not None:  # the bucket numbers and commits it (synth.store.bucket_root)
        return publish_to_bucket(settings, spec, lambda folder, version: _write_tables(folder, version, tables))
    lock_path = settings.locks_dir / f"publish-{spec.name}.lock"
    lock = acquire(
        lock_path,
        PUBLISH_WAIT_S,
        on_wait=lambda who: print(
            f"waiting for {who} to finish publishing {spec.name} ...", file=sys.stderr, flush=True
        ),
    )
    if lock is None:
        raise CatalogError(
            f"{spec.name} is being published by another process for over {PUBLISH_WAIT_S:.0f} s; rerun when it is done"
        )
    try:
        _remove_stale_staging(settings.datasets_dir / spec.name)
        run_id = spec.summary.get("run_id")
        earlier = _finish_earlier_attempt(settings, spec.name, run_id) if run_id else None
        return earlier or _publish(settings, spec, tables)
    finally:
        lock.release()


def _publish(settings: Settings, spec: VersionSpec, tables: Mapping[str, Iterable[Record]]) -> DatasetVersion:
    with Catalog.open(settings) as catalog:
        pending = catalog.reserve(spec.draft())
    final = settings.home.absolute() / pending.path
    staging = final.with_name(f".{final.name}.partial-{uuid.uuid4().hex[:8]}")
    try:
        pending = pending.model_copy(update={"row_counts": _write_tables(staging, pending, tables)})
        write_parts(staging)
        write_manifest(staging, pending.model_copy(update={"status": "published"}))
        _fsync_directory(staging)
        os.rename(staging, final)
        _fsync_directory(final.parent)
    except BaseException as error:
        shutil.rmtree(staging, ignore_errors=True)
        with Catalog.open(settings) as catalog:
            catalog.mark_failed(pending, f"{type(error).__name__}: {error}"[:500])
        raise
    remember(settings.home.absolute(), pending)  # its parts' hashes were just recorded: no re-read
    with Catalog.open(settings) as catalog:
        return catalog.mark_published(pending)


def _remove_stale_staging(folder: Path) -> None:
    """Staging folders of publishes that were killed (none is live: we hold the dataset's lock)."""
    for staging in folder.glob(".v*.partial-*"):
        shutil.rmtree(staging, ignore_errors=True)


def _finish_earlier_attempt(settings: Settings, name: str, run_id: str) -> DatasetVersion | None:
    """The version an earlier, killed attempt of run `run_id` published or fully wrote, or None."""
    with Catalog.open(settings) as catalog:
        mine = [
            version
            for version in catalog.versions(name, include_unpublished=True)
            if version.summary.get("run_id") == run_id
        ]
        for version in mine:
            if version.status == "published":
                return version
        for version in mine:
            if version.status != "pending":
                continue
            if (settings.home.absolute() / version.path / MANIFEST).is_file():  # renamed into place: complete
                return catalog.mark_published(
                    version.model_copy(
                        update={"row_counts": read_manifest(settings.home.absolute() / version.path).row_counts}
                    )
                )
            catalog.mark_failed(version, "killed while publishing; the rerun of the same run published anew")
    return None


def _write_tables(folder: Path, version: DatasetVersion, tables: Mapping[str, Iterable[Record]]) -> dict[str, int]:
    counts = {}
    for table, record_type in TABLES.items():
        writer = ShardWriter(folder / table, table, version.name, version.version)
        for record in tables.get(table, ()):
            if not isinstance(record, record_type):
                raise TypeError(f"table {table} holds {record_type.__name__} records, got {type(record).__name__}")
            writer.write(record)
        counts[table] = writer.close()
    return counts


def _fsync_directory(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)

"""A data root in a bucket (`SYNTH_HOME=s3://bucket/prefix`): the bucket holds the published versions,
and each machine keeps a copy it can rebuild in its local folder (`SYNTH_LOCAL_HOME`).

Every command works on the local folder as on any data root (the catalog index, DuckDB views over
local Parquet, the health checks), so nothing in the query, export or browse paths knows about
buckets and DuckDB needs no extension. What makes the bucket the source of truth:
- `pull` brings the local copy up to date before a command reads it: one listing of the manifests,
  and for each version the machine lacks, its manifest and parts, each part checked against the
  SHA-256 its manifest records as it streams in. A version with a changed or missing part is left
  out and named in one line (not fatal): the rest of the catalog still works. Evals and audits
  stored on other machines come down too, and the rows of their runs (synth.store.bucket_records).
- `publish_to_bucket` publishes a version: its parts are written locally, sent to the bucket, and
  committed there by a conditional put of the manifest (synth.bucket.publish): racing
  publishers on any machines never share a number, and the same run never publishes twice. Only
  then does the local copy take the version, under the number the bucket gave it.
The local copy of a version is a cache: delete the local folder and the next command pulls it back.
"""

import json
import shutil
import sys
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from synth.bucket import Bucket, find_run, manifest_keys, publish, verify
from synth.schemas import DatasetVersion
from synth.settings import Settings
from synth.store.bucket_records import pull_records, runs_elsewhere
from synth.store.catalog_index import CatalogIndex
from synth.store.health import remember, write_parts
from synth.store.locks import acquire
from synth.store.manifest import MANIFEST, write_manifest

PULL_WAIT_S = 600.0
"""How long a pull waits for another process of this machine pulling the same data root."""
BUCKET_FIELDS = ("parts", "run_id")
"""Manifest fields the bucket adds to a version's row."""


@dataclass
class PullReport:
    pulled: list[str] = field(default_factory=list)
    """Versions copied from the bucket."""
    damaged: list[str] = field(default_factory=list)
    """One line per version left out: a part changed or missing in the bucket."""
    bytes: int = 0
    records: list[str] = field(default_factory=list)
    """Evals, audits and audit samples copied (synth.store.bucket_records)."""


def root_bucket(settings: Settings) -> Bucket:
    if settings.bucket is None:
        raise ValueError("the data root is a local folder, not a bucket")
    return Bucket(settings.bucket)


def pull(settings: Settings, bucket: Bucket | None = None, quiet: bool = False) -> PullReport:
    """Copy the versions published in the bucket that the local copy lacks (module docstring)."""
    bucket = bucket or root_bucket(settings)
    report = PullReport()
    lock = acquire(settings.locks_dir / "pull.lock", PULL_WAIT_S)
    try:
        with CatalogIndex.open(settings) as catalog:
            known = {(version.name, version.version) for version in catalog.versions(include_unpublished=True)}
        missing = [key for key in manifest_keys(bucket) if key not in known]
        copied = []
        for name, number in missing:
            data = bucket.get(f"datasets/{name}/v{number}/manifest.json")
            if data is None:
                continue
            version = _copy_version(settings, bucket, json.loads(data), report)
            if version is not None:
                copied.append(version)
        report.records = pull_records(settings, bucket)
        with CatalogIndex.open(settings, read_only=True) as catalog:
            known = {run.run_id: run.status for run in catalog.runs(limit=10_000_000)}
        runs = [run for run in runs_elsewhere(settings, bucket, known) if known.get(run.run_id) != run.status]
        if copied or report.records or runs:
            with CatalogIndex.open(settings) as catalog:
                for version in copied:
                    catalog.register(version)
                for run in runs:
                    catalog.record_run(run)
                catalog.refresh_views()
    finally:
        if lock is not None:
            lock.release()
    if not quiet:
        _tell(settings, report)
    return report


def _copy_version(settings: Settings, bucket: Bucket, manifest: dict, report: PullReport) -> DatasetVersion | None:
    """Stream one version's parts into a staging folder, checking each hash, then move it into place."""
    version = to_version(manifest)
    final = settings.home.absolute() / version.path
    if (final / MANIFEST).is_file():  # copied before the catalog learned it (a pull killed midway)
        return version
    staging = final.with_name(f".{final.name}.pull-{uuid.uuid4().hex[:8]}")
    try:
        problems = []
        for path, entry in sorted(manifest["parts"].items()):
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            digest = bucket.download(entry["key"], target)
            if digest is None:
                problems.append(f"{path} is missing")
            elif digest != entry["sha256"]:
                problems.append(f"{path} changed (its SHA-256 differs from the manifest's)")
            else:
                report.bytes += entry["bytes"]
        if problems:
            report.damaged.append(
                f"{version.ref} in {settings.bucket} is left out: {'; '.join(problems)}; restore the part from a "
                f"copy, or publish the data again"
            )
            return None
        _install(settings, staging, version)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    report.pulled.append(version.ref)
    return version


def _install(settings: Settings, staging: Path, version: DatasetVersion) -> None:
    """Move a version's whole parts folder into this machine's copy, its manifest written last."""
    final = settings.home.absolute() / version.path
    write_parts(staging)
    write_manifest(staging, version)
    final.parent.mkdir(parents=True, exist_ok=True)
    if final.exists():  # a half copy a killed pull left without its manifest
        shutil.rmtree(final)
    staging.rename(final)
    remember(settings.home.absolute(), version)


def to_version(manifest: dict) -> DatasetVersion:
    """The version's row from its bucket manifest (which adds its parts and run id)."""
    return DatasetVersion.model_validate({key: value for key, value in manifest.items() if key not in BUCKET_FIELDS})


def _tell(settings: Settings, report: PullReport) -> None:
    if report.pulled:
        print(
            f"copied {len(report.pulled)} version(s) from {settings.bucket} ({report.bytes / 1e6:.1f} MB): "
            f"{', '.join(report.pulled[:5])}{' ...' if len(report.pulled) > 5 else ''}",
            file=sys.stderr,
        )
    for line in report.damaged:
        print(f"warning: {line}", file=sys.stderr)


def publish_to_bucket(settings: Settings, spec, write_tables) -> DatasetVersion:
    """Publish `spec` as the next version of its dataset in the bucket (module docstring);
    `write_tables(folder, version) -> row counts` writes its parts for a version number."""
    bucket = root_bucket(settings)
    run_id = spec.summary.get("run_id") or f"publish-{uuid.uuid4().hex}"
    folder = settings.datasets_dir / spec.name
    built: dict[int, tuple[Path, DatasetVersion]] = {}

    def build(number: int):
        staging = folder / f".v{number}.partial-{uuid.uuid4().hex[:8]}"
        path, now = f"datasets/{spec.name}/v{number}", datetime.now(UTC)
        draft = spec.draft().model_copy(
            update={"version": number, "path": path, "status": "published", "published_at": now}
        )
        if built:  # lost the number to another publisher: the rows written once, renumbered
            first_staging, first = next(iter(built.values()))
            _renumber(first_staging, staging, number)
            version = draft.model_copy(update={"row_counts": first.row_counts})
        else:
            version = draft.model_copy(update={"row_counts": write_tables(staging, draft)})
        built[number] = (staging, version)
        parts = {str(path.relative_to(staging)): path for path in sorted(staging.rglob("*.parquet"))}
        return parts, version.model_dump(mode="json")

    try:
        number = publish(bucket, spec.name, run_id, build)
        if number in built:  # this machine wrote the parts: keep them rather than copy them back
            _install(settings, *built[number])
    finally:
        for staging, _ in built.values():
            shutil.rmtree(staging, ignore_errors=True)
    pull(settings, bucket, quiet=True)  # registers it, with any version other machines published meanwhile
    with CatalogIndex.open(settings, read_only=True) as catalog:
        return catalog.resolve(f"{spec.name}@{number}")


def _renumber(source: Path, target: Path, number: int) -> None:
    """Copy the parts under `source` to `target` with their rows' `version` set to `number` (the
    tables a run hands to publish may be streams that can be read only once)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for part in sorted(source.rglob("*.parquet")):
        table = pq.read_table(part)
        position = table.schema.get_field_index("version")
        field = table.schema.field(position)
        table = table.set_column(position, field, pa.array([number] * table.num_rows, type=field.type))
        destination = target / part.relative_to(source)
        destination.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(table, destination, compression="zstd")


def verify_bucket(settings: Settings, refs: set[str] | None = None) -> dict[str, list[str]]:
    """Each version's parts in the bucket (or those of `refs`) re-hashed against its manifest."""
    bucket = root_bucket(settings)
    found = {}
    for name, number in manifest_keys(bucket):
        ref = f"{name}@{number}"
        data = bucket.get(f"datasets/{name}/v{number}/manifest.json") if refs is None or ref in refs else None
        if data is not None:
            found[ref] = verify(bucket, json.loads(data))
    return found


__all__ = ["PullReport", "find_run", "publish_to_bucket", "pull", "root_bucket", "to_version", "verify_bucket"]

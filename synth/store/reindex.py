"""Rebuild the catalog index from the version folders, after the catalog file was lost or damaged.

The manifests are the source of truth for versions and the run folders for runs: each run keeps its
catalog row, funnel and summary included, in `runs/<id>/record.json` (where the data root is a
bucket, the rows of runs other machines made are read from the bucket). A rebuild reads those back;
a run folder from before record.json existed gives what its `run.json` holds (id, dataset, recipe,
status, version), and a damaged catalog file is read for what it still yields first.
"""

import json
import os
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from synth.bucket import Bucket
from synth.schemas import RunRecord
from synth.settings import Settings
from synth.store.bucket_records import runs_elsewhere
from synth.store.catalog_index import CatalogIndex, DamagedCatalogError
from synth.store.locks import acquire
from synth.store.manifest import MANIFEST, read_manifest
from synth.store.workdir import RECORD_FILE, RUN_FILE


@dataclass
class ReindexReport:
    found: list[str] = field(default_factory=list)
    """Versions registered from their manifests."""
    unreadable: list[str] = field(default_factory=list)
    """Manifests that could not be read (their versions stay out of the catalog)."""
    runs_kept: int = 0
    """Runs read back from the damaged catalog file."""
    runs_restored: int = 0
    """Runs read back whole from their run folders (`record.json`)."""
    runs_rebuilt: int = 0
    """Runs restored from older run folders (status and version only: no record.json)."""


def reindex(settings: Settings, salvaged_runs: list[RunRecord] | None = None) -> ReindexReport:
    """Register every complete version folder the catalog does not know, and every run it lacks;
    a damaged catalog file is moved aside and rebuilt."""
    try:
        return _reindex(settings, salvaged_runs)
    except DamagedCatalogError as error:
        return recover_catalog(settings, str(error))


def _reindex(settings: Settings, salvaged_runs: list[RunRecord] | None) -> ReindexReport:
    report = ReindexReport()
    with CatalogIndex.open(settings) as catalog:
        known = {(version.name, version.version) for version in catalog.versions(include_unpublished=True)}
        for manifest in sorted(settings.datasets_dir.glob(f"*/v*/{MANIFEST}")):
            try:
                version = read_manifest(manifest.parent)
            except (OSError, ValueError) as error:
                report.unreadable.append(f"{manifest}: {str(error).splitlines()[0][:120]}")
                continue
            if (version.name, version.version) not in known:
                catalog.register(version)
                known.add((version.name, version.version))
                report.found.append(version.ref)
        for folder in sorted(settings.datasets_dir.glob("*/v*")):
            if folder.is_dir() and folder.name[1:].isdigit() and not (folder / MANIFEST).exists():
                report.unreadable.append(
                    f"{folder}: no {MANIFEST}, so this version cannot be listed; its parts are kept (restore the "
                    "manifest from a copy to list it again)"
                )
        recorded = {run.run_id for run in catalog.runs(limit=10_000_000)}
        folders = _runs_from_folders(settings.home.absolute() / "runs")
        if settings.bucket is not None:  # the runs other machines made: their rows are in the bucket
            folders += [(run, True) for run in runs_elsewhere(settings, Bucket(settings.bucket), {})]
        whole = {run.run_id: run for run, complete in folders if complete}
        for run in [*whole.values(), *(salvaged_runs or []), *(run for run, complete in folders if not complete)]:
            if run.run_id in recorded:
                continue
            catalog.record_run(run)
            recorded.add(run.run_id)
            if run.run_id in whole:
                report.runs_restored += 1
            elif run in (salvaged_runs or []):
                report.runs_kept += 1
            else:
                report.runs_rebuilt += 1
        catalog.refresh_views()
    return report


def _runs_from_folders(runs: Path) -> list[tuple[RunRecord, bool]]:
    """Each run folder's run, and whether it came back whole (from its record.json)."""
    found = []
    for run_file in sorted(runs.glob(f"*/{RUN_FILE}")):
        try:
            found.append((RunRecord.model_validate_json((run_file.parent / RECORD_FILE).read_text()), True))
            continue
        except (OSError, ValueError):
            pass  # an older run folder (or a damaged record): what run.json says
        try:
            info = json.loads(run_file.read_text())
            status = info.get("status", "running")
            found.append(
                (
                    RunRecord(
                        run_id=info["run_id"],
                        dataset=info["dataset"],
                        recipe=info["recipe"],
                        status=status if status in ("running", "published", "failed", "stopped") else "failed",
                        started_at=datetime.fromisoformat(info["started_at"]),
                        version=info.get("version"),
                        runner="local",
                        stages=sorted(path.parent.name for path in run_file.parent.glob("*/stage.json")),
                        error=None if status == "published" else "history rebuilt from the run folder by reindex",
                    ),
                    False,
                )
            )
        except (OSError, ValueError, KeyError):
            continue
    return found


def salvage_runs(path: Path) -> list[RunRecord]:
    """The run rows a damaged catalog file still yields (none if it cannot be read at all)."""
    import duckdb

    try:
        with duckdb.connect(str(path), read_only=True) as connection:
            cursor = connection.execute("select * from runs")
            columns = [column[0] for column in cursor.description]
            return [CatalogIndex._to_run(dict(zip(columns, row))) for row in cursor.fetchall()]
    except Exception:  # any failure to read means nothing can be salvaged; the folders still can be
        return []


def recover_catalog(settings: Settings, reason: str) -> ReindexReport:
    """Move a damaged catalog file aside and rebuild the index from the manifests, saying what was kept."""
    path = settings.catalog_path
    lock = acquire(path.with_name(f".{path.name}.recover.lock"), timeout_s=600)
    try:
        if not path.exists() or not _still_damaged(settings):  # another process recovered it while we waited
            return _reindex(settings, None)
        aside = path.with_name(f"{path.name}.damaged-{datetime.now(UTC):%Y%m%dT%H%M%S}")
        os.replace(path, aside)
        wal = path.with_name(path.name + ".wal")
        if wal.exists():
            os.replace(wal, aside.with_name(aside.name + ".wal"))
        runs = salvage_runs(aside)
        report = _reindex(settings, runs)
    finally:
        if lock is not None:
            lock.release()
    lost = f", {report.runs_rebuilt} from older run folders (status only)" if report.runs_rebuilt else ""
    print(
        f"warning: the catalog {path} was damaged ({reason}); moved it to {aside.name} and rebuilt it from "
        f"{len(report.found)} version manifests; run history: {report.runs_restored} runs restored from their "
        f"folders, {report.runs_kept} read from the damaged file{lost}",
        file=sys.stderr,
    )
    return report


def _still_damaged(settings: Settings) -> bool:
    """Whether the catalog file is damaged now, checked again under the recovery lock: another
    process may have rebuilt it meanwhile. Any other failure to open it is raised, never repaired."""
    try:
        with CatalogIndex.open(settings, read_only=True):
            return False
    except DamagedCatalogError:
        return True

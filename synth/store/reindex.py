"""Rebuild the catalog index from the version folders, after the catalog file was lost or damaged.

The manifests are the source of truth for versions; the run history lives only in the catalog,
so a rebuild keeps what the damaged file still yields and fills the rest in from the run folders
(`runs/*/run.json`: id, dataset, recipe, status, version; their funnels and summaries are lost).
"""

import json
import os
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from synth.schemas import RunRecord
from synth.settings import Settings
from synth.store.catalog_index import CatalogIndex, DamagedCatalogError
from synth.store.locks import acquire
from synth.store.manifest import MANIFEST, read_manifest


@dataclass
class ReindexReport:
    found: list[str] = field(default_factory=list)
    """Versions registered from their manifests."""
    unreadable: list[str] = field(default_factory=list)
    """Manifests that could not be read (their versions stay out of the catalog)."""
    runs_kept: int = 0
    runs_rebuilt: int = 0
    """Runs restored from their run folders (status and version only)."""


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
        for run in salvaged_runs or []:
            if run.run_id not in recorded:
                catalog.record_run(run)
                recorded.add(run.run_id)
                report.runs_kept += 1
        for run in _runs_from_folders(settings.home.absolute() / "runs"):
            if run.run_id not in recorded:
                catalog.record_run(run)
                report.runs_rebuilt += 1
        catalog.refresh_views()
    return report


def _runs_from_folders(runs: Path) -> list[RunRecord]:
    found = []
    for run_file in sorted(runs.glob("*/run.json")):
        try:
            info = json.loads(run_file.read_text())
            status = info.get("status", "running")
            found.append(
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
        if not path.exists():  # another process recovered it while we waited
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
    print(
        f"warning: the catalog {path} was damaged ({reason}); moved it to {aside.name} and rebuilt it from "
        f"{len(report.found)} version manifests; run history: {report.runs_kept} runs kept, "
        f"{report.runs_rebuilt} rebuilt from run folders (their funnels and summaries are lost)",
        file=sys.stderr,
    )
    return report

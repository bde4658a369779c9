"""Evals, audits and runs' rows where the data root is a bucket: stored on one machine, seen on
every machine.

Locally each eval and each audit is a write-once folder, `datasets/.evals/ID/` or
`datasets/.audits/ID/`, finished once its `run.parquet` exists, and each audit sample one file,
`datasets/.audits/samples/ID.json` (synth.store.evals, synth.store.audits). The bucket keeps the same
keys under its prefix: the machine that stores one sends it up (the folder's `run.parquet` last, so
a folder cut off midway is unfinished there too), and `pull` (synth.store.bucket_root) brings down
what this machine lacks. Ids name their content, so two machines storing the same eval write the
same files.

A run's catalog row is kept beside its stages, `runs/ID/record.json` (synth.store.run_mirror), by the
machine that records it; other machines read the rows of the runs they did not make (`runs_elsewhere`),
so `synth runs list` and a reindex on a fresh machine show every machine's runs.
"""

import uuid
from pathlib import Path

from synth.bucket import Bucket
from synth.schemas import RunRecord
from synth.settings import Settings

RECORD_FOLDERS = (".evals", ".audits")
LAST_FILE = "run.parquet"
SAMPLES = "samples"


def share(settings: Settings, stored: Path) -> None:
    """Send an eval's or audit's folder, or an audit sample's file, this machine just stored, to
    the bucket data root; nothing where the data root is a folder."""
    if settings.bucket is None:
        return
    bucket = Bucket(settings.bucket)
    files = [stored] if stored.is_file() else [path for path in stored.rglob("*") if path.is_file()]
    for path in sorted(
        (path for path in files if not path.name.startswith(".")), key=lambda path: path.name == LAST_FILE
    ):
        bucket.put("datasets/" + path.relative_to(settings.datasets_dir).as_posix(), path)


def pull_records(settings: Settings, bucket: Bucket) -> list[str]:
    """Download the evals, audits and audit samples in the bucket that this machine lacks; their
    paths under the datasets folder."""
    fetched = []
    for kind in RECORD_FOLDERS:
        prefix = f"datasets/{kind}/"
        groups: dict[str, list[str]] = {}
        for key in bucket.list(prefix):
            groups.setdefault(key[len(prefix) :].split("/")[0], []).append(key)
        for name, keys in sorted(groups.items()):
            local = settings.datasets_dir / kind / name
            if name == SAMPLES:
                fetched += [_fetch(bucket, key, settings) for key in keys if not _local(settings, key).exists()]
            elif f"{prefix}{name}/{LAST_FILE}" in keys and not (local / LAST_FILE).exists():
                for key in sorted(keys, key=lambda key: key.endswith(f"/{LAST_FILE}")):
                    _fetch(bucket, key, settings)
                fetched.append(f"{kind}/{name}")
    return fetched


def _local(settings: Settings, key: str) -> Path:
    return settings.datasets_dir / key.removeprefix("datasets/")


def _fetch(bucket: Bucket, key: str, settings: Settings) -> str:
    """One file into place whole (written beside it, then renamed)."""
    target = _local(settings, key)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:6]}.tmp")
    if bucket.download(key, temporary) is None:
        temporary.unlink(missing_ok=True)
        raise FileNotFoundError(f"{key} vanished from {settings.bucket} while it was copied; run again")
    temporary.replace(target)
    return key.removeprefix("datasets/")


def runs_elsewhere(settings: Settings, bucket: Bucket, known: dict[str, str]) -> list[RunRecord]:
    """The rows of the runs in the bucket that this machine did not record, and that `known` (run
    id -> status in this machine's catalog) lacks or holds as still running: those another machine
    may have finished since. A run this machine recorded keeps the row it wrote itself."""
    runs, rows = settings.home.absolute() / "runs", []
    for run_id in bucket.folders("runs/"):
        if run_id == "by-key" or (runs / run_id / "record.json").exists() or known.get(run_id, "running") != "running":
            continue
        data = bucket.get(f"runs/{run_id}/record.json")
        if data is None:  # a run whose first row is not written yet
            continue
        try:
            rows.append(RunRecord.model_validate_json(data))
        except ValueError:
            continue  # a damaged row: the run's own machine still has it
    return rows

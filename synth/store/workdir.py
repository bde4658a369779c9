"""A run's working folder: each finished stage (construction, each panel shard) saved as Parquet
parts plus a `stage.json` written last, so a killed run resumes where it stopped.

`$SYNTH_HOME/runs/<run_id>/` holds `run.json` (recipe, dataset, config, status), `record.json` (the
run's catalog row: funnel, summary) and one folder per stage. A rerun with the same recipe,
dataset, config and models picks up the newest unfinished run and skips every stage whose
`stage.json` exists. The same run once published is not made again:
rerunning the same command returns the version it published (change the seed or a parameter
for new items).

Where the data root is a bucket, the run folder is kept there too (synth.store.run_mirror): each
save, `run.json` and `record.json` go up after their local write, a stage any machine saved counts
as done, and loading it downloads it once. The local folder is then this machine's cache of the run.
"""

import json
import os
import threading
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from synth.bucket import Bucket
from synth.errors import RunBusyError
from synth.hashing import content_hash
from synth.schemas import Record
from synth.settings import Settings
from synth.store.arrow_schema import from_row
from synth.store.locks import acquire, holder
from synth.store.run_mirror import RunMirror
from synth.store.shards import ShardWriter
from synth.store.tables import TABLES

RUN_FILE = "run.json"
STAGE_FILE = "stage.json"
RECORD_FILE = "record.json"
"""The run's catalog row (funnel, summary, timing) as last recorded: the catalog is an index, so a
rebuilt one reads every run's history back from here."""


@dataclass
class StageOutput:
    """What a stage hands on: record tables (names from the store's TABLES) and JSON metadata."""

    tables: dict[str, list[Record]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)


def _write_json(path: Path, data: dict) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, path)


class RunDir:
    def __init__(self, root: Path, lock=None, mirror: RunMirror | None = None):
        self.root = root
        self.lock = lock
        """This process's hold on the run (see `open`), released by `release()` or by exiting."""
        self.mirror = mirror
        """The run's copy in the bucket, where the data root is one."""
        self._pulling = threading.Lock()

    @property
    def id(self) -> str:
        return self.root.name

    @property
    def info(self) -> dict[str, Any]:
        return json.loads((self.root / RUN_FILE).read_text())

    @classmethod
    def open(cls, settings: Settings, recipe: str, dataset: str, config: dict, models: dict | None = None) -> "RunDir":
        """The newest run of this recipe, dataset, config and models (finished or not), or a new one,
        held by this process: a second process with the same run gets RunBusyError instead of
        sending every request twice and publishing a second version."""
        key = content_hash({"recipe": recipe, "dataset": dataset, "config": config, "models": models or {}})
        runs = settings.home.absolute() / "runs"
        lock_path = settings.locks_dir / f"run-{dataset}-{key}.lock"
        lock = acquire(lock_path)
        if lock is None:
            raise RunBusyError(
                f"this run (recipe {recipe}, dataset {dataset}, same config and models) is already being made by "
                f"{holder(lock_path)}; wait for it to finish (`synth runs list`) or stop it: a run has one writer"
            )
        try:
            if settings.bucket is not None:
                return cls._open_in_bucket(Bucket(settings.bucket), runs, key, recipe, dataset, config, lock)
            return cls(cls._find_or_create(runs, key, recipe, dataset, config), lock)
        except BaseException:
            lock.release()
            raise

    @staticmethod
    def _find_or_create(runs: Path, key: str, recipe: str, dataset: str, config: dict) -> Path:
        for candidate in sorted(runs.glob(f"{dataset}-*"), reverse=True):
            run_file = candidate / RUN_FILE
            if run_file.is_file():
                try:
                    info = json.loads(run_file.read_text())
                except (OSError, ValueError):  # a damaged run folder is not resumed; a new run starts
                    continue
                if info.get("key") == key:
                    return candidate
        root = runs / _new_run_id(dataset)
        _start(root, key, recipe, dataset, config)
        return root

    @classmethod
    def _open_in_bucket(
        cls, bucket: Bucket, runs: Path, key: str, recipe: str, dataset: str, config: dict, lock
    ) -> "RunDir":
        """The run of `key` in the bucket, whichever machine started it, or a new one there."""
        run_id, new = RunMirror.claim(bucket, dataset, key, _new_run_id(dataset))
        mirror = RunMirror(bucket, run_id)
        root = runs / run_id
        if new or not mirror.pull_file(RUN_FILE, root / RUN_FILE):  # none: its maker died before writing it
            _start(root, key, recipe, dataset, config)
            mirror.push_file(root / RUN_FILE)
        return cls(root, lock, mirror)

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    @classmethod
    def at(cls, root: Path) -> "RunDir":
        if not (root / RUN_FILE).is_file():
            raise FileNotFoundError(f"{root} is not a synth run folder (no {RUN_FILE})")
        return cls(root)

    @classmethod
    def attach(cls, settings: Settings, run_id: str) -> "RunDir":
        """Run `run_id` of the data root, as a task on any worker opens it (no hold on it: the
        process that opened the run holds it); from a bucket data root, `run.json` is read afresh."""
        root = settings.home.absolute() / "runs" / run_id
        if settings.bucket is None:
            return cls.at(root)
        mirror = RunMirror(Bucket(settings.bucket), run_id)
        if not mirror.pull_file(RUN_FILE, root / RUN_FILE):
            raise FileNotFoundError(f"run {run_id} is not in {settings.bucket} (no runs/{run_id}/{RUN_FILE})")
        return cls(root, mirror=mirror)

    def update(self, **fields: Any) -> None:
        _write_json(self.root / RUN_FILE, {**self.info, **fields})
        if self.mirror is not None:
            self.mirror.push_file(self.root / RUN_FILE)

    def write_record(self, record: Record) -> None:
        """Keep the run's catalog row beside its stages (see RECORD_FILE)."""
        _write_json(self.root / RECORD_FILE, record.model_dump(mode="json"))
        if self.mirror is not None:
            self.mirror.push_file(self.root / RECORD_FILE)

    def done(self, stage: str) -> bool:
        if (self.root / stage / STAGE_FILE).is_file():
            return True
        return self.mirror is not None and stage in self.mirror.saved_stages()

    def refresh(self) -> None:
        """See stages other machines saved since this one last looked (a bucket data root's
        listing is otherwise reused for a moment, synth.store.run_mirror.LISTING_TTL_S)."""
        if self.mirror is not None:
            self.mirror.forget_listing()

    def save(self, stage: str, output: StageOutput) -> None:
        """Write the tables, then `stage.json`: only a complete stage counts as done (in the
        bucket too, where the data root is one: its `stage.json` goes up last)."""
        folder = self.root / stage
        folder.mkdir(parents=True, exist_ok=True)
        for table, records in output.tables.items():
            writer = ShardWriter(folder / table, table, self.id, 0)
            writer.write_all(records)
            writer.close()
        _write_json(folder / STAGE_FILE, {"tables": sorted(output.tables), "meta": output.meta})
        if self.mirror is not None:
            try:
                self.mirror.push_stage(folder)
            except BaseException:  # done here but not in the bucket would hide it from every other machine
                (folder / STAGE_FILE).unlink(missing_ok=True)
                raise

    def _local(self, stage: str) -> Path:
        """The stage's folder on this machine, downloaded first where another machine saved it."""
        folder = self.root / stage
        if self.mirror is not None and not (folder / STAGE_FILE).is_file():
            with self._pulling:
                if not (folder / STAGE_FILE).is_file():
                    self.mirror.pull_stage(stage, folder)
        return folder

    def meta(self, stage: str) -> dict[str, Any]:
        """A finished stage's metadata alone (no tables read)."""
        return json.loads((self._local(stage) / STAGE_FILE).read_text())["meta"]

    def load(self, stage: str) -> StageOutput:
        folder = self._local(stage)
        saved = json.loads((folder / STAGE_FILE).read_text())
        tables = {}
        for table in saved["tables"]:
            rows = pq.read_table(folder / table).to_pylist() if any((folder / table).glob("*.parquet")) else []
            tables[table] = [from_row(TABLES[table], row) for row in rows]
        return StageOutput(tables, saved["meta"])

    def stages(self) -> list[str]:
        local = {path.parent.name for path in self.root.glob(f"*/{STAGE_FILE}")}
        return sorted(local | (self.mirror.saved_stages() if self.mirror is not None else set()))


def _new_run_id(dataset: str) -> str:
    return f"{dataset}-{datetime.now(UTC):%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:6]}"


def _start(root: Path, key: str, recipe: str, dataset: str, config: dict) -> None:
    """A new run's folder and its `run.json`."""
    root.mkdir(parents=True, exist_ok=True)
    _write_json(
        root / RUN_FILE,
        {
            "run_id": root.name,
            "key": key,
            "recipe": recipe,
            "dataset": dataset,
            "config": config,
            "status": "running",
            "started_at": datetime.now(UTC).isoformat(),
        },
    )

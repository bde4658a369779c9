"""A run's folder kept in the bucket as well, where the data root is one (`SYNTH_HOME=s3://...`), so
machines that share nothing but the bucket work on one run: a shard task on any worker reads the
stages it needs from the bucket and saves its own there, and a run resumed on another machine skips
every stage any machine saved.

Layout under the data root's prefix:
- `runs/ID/run.json`, `runs/ID/record.json`: as in a local run folder (synth.store.workdir);
- `runs/ID/STAGE/...`: a stage's Parquet parts, then `runs/ID/STAGE/stage.json`, written last: a
  stage is done once that object exists, so a worker killed mid-upload leaves a stage not done;
- `runs/by-key/DATASET-KEY`: the id of the run of one recipe, dataset, config and models, written
  once by a conditional put, so two machines opening the same run agree on its id.

Each machine's local run folder is its cache of the bucket's: a stage another machine saved is
downloaded once (its `stage.json` last), the same way a local save writes it.
"""

import json
import shutil
import threading
import time
import uuid
from pathlib import Path

from synth.bucket import Bucket

STAGE_FILE = "stage.json"
LISTING_TTL_S = 0.5
"""How long one listing of the run's stages in the bucket answers `done`: a scheduler polls every
stage twice a second, and one LIST then serves all of them."""


class RunMirror:
    """The bucket's copy of run `run_id`."""

    def __init__(self, bucket: Bucket, run_id: str):
        self.bucket, self.run_id = bucket, run_id
        self.prefix = f"runs/{run_id}/"
        self._listed: tuple[float, frozenset[str]] = (float("-inf"), frozenset())
        self._lock = threading.Lock()

    @staticmethod
    def claim(bucket: Bucket, dataset: str, key: str, new_id: str) -> tuple[str, bool]:
        """The run id for `key`: `new_id` if this call made it (True), else the one a machine made before."""
        path = f"runs/by-key/{dataset}-{key}"
        if bucket.create(path, json.dumps({"run_id": new_id}).encode()):
            return new_id, True
        saved = bucket.get(path)
        if saved is None:  # only a delete by hand between the two calls does this
            raise RuntimeError(f"{path} vanished from the bucket while the run was opened; run again")
        return json.loads(saved)["run_id"], False

    def push_file(self, local: Path) -> None:
        """A run-level file (run.json, record.json) after its local write."""
        self.bucket.put(self.prefix + local.name, local)

    def pull_file(self, name: str, target: Path) -> bool:
        """A run-level file into `target` (replaced whole); False where the bucket has none."""
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{uuid.uuid4().hex[:6]}.tmp")
        if self.bucket.download(self.prefix + name, temporary) is None:
            temporary.unlink(missing_ok=True)
            return False
        temporary.replace(target)
        return True

    def push_stage(self, folder: Path) -> None:
        """A stage's files as saved locally, `stage.json` last."""
        files = sorted(path for path in folder.rglob("*") if path.is_file() and not path.name.startswith("."))
        for path in sorted(files, key=lambda path: path.name == STAGE_FILE):
            self.bucket.put(f"{self.prefix}{folder.name}/{path.relative_to(folder).as_posix()}", path)
        self.forget_listing()

    def forget_listing(self) -> None:
        """The next `saved_stages` lists the bucket again (a task just said it saved a stage)."""
        with self._lock:
            self._listed = (float("-inf"), frozenset())

    def saved_stages(self) -> frozenset[str]:
        """The stages whose `stage.json` is in the bucket, listed at most every LISTING_TTL_S."""
        with self._lock:
            listed_at, stages = self._listed
            if time.monotonic() - listed_at < LISTING_TTL_S:
                return stages
        keys = self.bucket.list(self.prefix)
        finished = [key[len(self.prefix) :] for key in keys if key.endswith(f"/{STAGE_FILE}")]
        stages = frozenset(name.split("/")[0] for name in finished if name.count("/") == 1)
        with self._lock:
            self._listed = (time.monotonic(), stages)
        return stages

    def pull_stage(self, stage: str, folder: Path) -> bool:
        """Download a stage saved in the bucket into `folder`, whole or not at all; False where
        the bucket has no finished stage of that name."""
        keys = self.bucket.list(f"{self.prefix}{stage}/")
        if f"{self.prefix}{stage}/{STAGE_FILE}" not in keys:
            return False
        staging = folder.with_name(f".{folder.name}.{uuid.uuid4().hex[:6]}.partial")
        try:
            for key in keys:
                target = staging / key[len(f"{self.prefix}{stage}/") :]
                target.parent.mkdir(parents=True, exist_ok=True)
                if self.bucket.download(key, target) is None:
                    raise RuntimeError(f"{key} vanished from the bucket while it was downloaded; run again")
            if folder.exists():  # a part-written local folder of a stage another machine finished
                shutil.rmtree(folder)
            staging.replace(folder)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return True

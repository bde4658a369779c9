"""A recipe flow across machines that share only a bucket (a real SeaweedFS server on loopback) and
the Prefect server: a Dask cluster whose two workers are separate processes, each with its own
working folder, home and local copy of the data root. A worker is killed mid-shard together with
the flow's process; a third machine resumes the flow, and the run publishes the same items as a
local run of the same seed, with no answered request sent twice."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from synth.bucket import Bucket
from synth.llm.openai_http import STRAGGLERS_PER_SLOT
from synth.settings import Settings
from synth.store.bucket_root import pull
from synth.store.catalog import Catalog
from synth.store.reader import iter_records

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from fault_server import FaultServer  # noqa: E402
from seaweed import _free_port, seaweed_server  # noqa: E402, F401

CONCURRENCY = 2
FLOWS = """\
models:
  served: {{backend: openai, model: smol, endpoints: ["{url}"], max_concurrency: {concurrency}}}
flows:
  spread:
    recipe: multihop
    dataset: spread
    shard_size: 2
    params:
      n: 8
      seed: 4
      hops: [2]
      panel:
        solvers: [{{name: s, model: served, k: 2}}, {{name: r, baseline: bm25_reader, conditions: [search], k: 1}}]
    task_runner: {runner}
"""
SYNTH = [sys.executable, "-m", "synth.cli.main"]


def _machine(tmp_path: Path, name: str, **environ: str) -> tuple[dict[str, str], Path]:
    """The environment and working folder of machine `name`: its own home, nothing of the others'."""
    folder = tmp_path / name
    (folder / "home").mkdir(parents=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith(("SYNTH_", "PREFECT_", "AWS_"))}
    keep = {key: os.environ[key] for key in ("SYNTH_TEST_NETGUARD_LOG",) if key in os.environ}
    return {**env, **keep, "HOME": str(folder / "home"), **environ}, folder


def _flows_run(flows: Path, env: dict[str, str], cwd: Path, **popen) -> subprocess.Popen:
    return subprocess.Popen(
        [*SYNTH, "flows", "run", "spread", "--flows-file", str(flows), "--json"],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        **popen,
    )


def _finished(process: subprocess.Popen) -> dict:
    out, _ = process.communicate(timeout=400)
    assert process.returncode == 0, out[-3000:]
    return json.loads(out[out.index("{") : out.rindex("}") + 1])


def _published_items(settings: Settings, ref: str) -> list[tuple]:
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref)
    return sorted((item.id, item.question, item.difficulty) for item in iter_records(settings, version, "items"))


class Cluster:
    """A Dask scheduler and workers, each a process of its own machine (`_machine`)."""

    def __init__(self, tmp_path: Path, bucket_env: dict[str, str]):
        self.tmp_path, self.bucket_env = tmp_path, bucket_env
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.processes: dict[str, subprocess.Popen] = {}
        env, folder = _machine(tmp_path, "scheduler")
        self._start("scheduler", ["scheduler", "--host", "127.0.0.1", "--port", str(self.port)], env, folder)

    def _start(self, name: str, arguments: list[str], env: dict[str, str], folder: Path) -> None:
        dask = str(Path(sys.executable).with_name("dask"))
        log = (folder / f"{name}.log").open("w")
        self.processes[name] = subprocess.Popen(
            [dask, *arguments, "--no-dashboard"], env=env, cwd=folder, stdout=log, stderr=subprocess.STDOUT
        )

    def worker(self, name: str) -> None:
        env, folder = _machine(self.tmp_path, name, **self.bucket_env)
        env["SYNTH_LOCAL_HOME"] = str(folder / "local")
        arguments = ["worker", self.address, "--nthreads", "1", "--no-nanny", "--name", name]
        self._start(name, [*arguments, "--local-directory", str(folder / "dask")], env, folder)

    def wait_for(self, workers: int) -> None:
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(workers, timeout=120)

    def kill(self, name: str) -> None:
        self.processes[name].send_signal(signal.SIGKILL)
        self.processes[name].wait()

    def stop(self) -> None:
        for process in self.processes.values():
            process.kill()
            process.wait()


def _quiet(server: FaultServer, for_s: float = 3.0) -> None:
    """Wait until the server has had no request for `for_s` (the killed run's last shards are over)."""
    seen, since = -1, time.monotonic()
    while time.monotonic() - since < for_s:
        if len(server.requests) != seen:
            seen, since = len(server.requests), time.monotonic()
        time.sleep(0.2)


def test_workers_sharing_only_a_bucket_resume_a_killed_flow_sending_nothing_twice(
    tmp_path, seaweed, prefect_server, monkeypatch
):
    # the same flow on one machine with a local data root: the items to expect
    reference_server = FaultServer(latency_s=0.05).start_in_thread()
    (tmp_path / "reference.yaml").write_text(
        FLOWS.format(concurrency=CONCURRENCY, url=reference_server.url, runner="{kind: local}")
    )
    data = tmp_path / "reference" / "data"
    env, folder = _machine(tmp_path, "reference", SYNTH_HOME=str(data), PREFECT_API_URL=prefect_server)
    reference = _finished(_flows_run(tmp_path / "reference.yaml", env, folder))
    expected = _published_items(Settings(home=data), reference["ref"])
    reference_server.stop()

    server = FaultServer(latency_s=0.05).start_in_thread()
    cluster = Cluster(tmp_path, {**seaweed.environ(), "PREFECT_API_URL": prefect_server})
    flows = tmp_path / "flows.yaml"
    flows.write_text(
        FLOWS.format(concurrency=CONCURRENCY, url=server.url, runner=f"{{kind: dask, address: '{cluster.address}'}}")
    )
    url = f"s3://synth-tests/{tmp_path.name[:30]}"
    bucket_env = {**seaweed.environ(), "SYNTH_HOME": url, "PREFECT_API_URL": prefect_server}
    try:
        cluster.worker("w1")
        cluster.worker("w2")
        cluster.wait_for(2)
        env, folder = _machine(tmp_path, "flow1", **bucket_env)
        first = _flows_run(flows, env, folder)
        bucket = Bucket(url, environ=seaweed.environ())
        deadline = time.monotonic() + 300
        while not _saved(bucket, "attempt-"):  # mid-run: a panel shard saved, the others being attempted
            assert first.poll() is None, first.communicate()[0][-3000:]
            assert time.monotonic() < deadline, "the flow never got going"
            time.sleep(0.05)
        cluster.kill("w1")  # a worker's machine dies mid-shard, and so does the flow's
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        _quiet(server)
        in_flight = _in_flight(server, bucket)
        assert len(in_flight) <= CONCURRENCY * (1 + STRAGGLERS_PER_SLOT), f"{len(in_flight)} out at once"
        assert _saved(bucket, "construct") and not _saved(bucket, "label"), "killed too late: every shard was done"
        sent_before = len(server.requests)

        cluster.worker("w3")  # a fresh machine joins; a third one resumes the flow
        cluster.wait_for(2)
        env, folder = _machine(tmp_path, "flow3", **bucket_env)
        resumed = _finished(_flows_run(flows, env, folder))
    finally:
        cluster.stop()
        server.stop()

    assert len(server.requests) > sent_before, "the resumed flow had no shard left to do"
    paid_twice = [
        body for body, count in server.distinct.items() if count - server.hedges[body] > 1 + (body in in_flight)
    ]
    assert server.distinct and not paid_twice, f"{len(paid_twice)} answered requests sent again"
    for variable, value in seaweed.environ().items():  # a fourth machine reads what was published
        monkeypatch.setenv(variable, value)
    reader = Settings(home=url, local_home=tmp_path / "reader")
    pull(reader, quiet=True)
    assert _published_items(reader, resumed["ref"]) == expected and expected
    with Catalog.open(reader, read_only=True) as catalog:  # the run's row, recorded on a worker, is seen here
        assert catalog.run(resumed["run_id"]).status == "published"
    shards = [key for key in bucket.list("runs/") if "/attempt-" in key and key.endswith("/stage.json")]
    workers = {json.loads(bucket.get(key) or b"{}")["meta"]["worker"] for key in shards}
    assert len(workers) >= 2, f"the panel shards ran on {workers} only"


def _saved(bucket: Bucket, stage: str) -> bool:
    """Whether a stage whose name starts with `stage` is saved in the bucket (by any machine)."""
    return any(key.split("/")[2].startswith(stage) for key in bucket.list("runs/") if key.endswith("/stage.json"))


def _in_flight(server: FaultServer, bucket: Bucket) -> set[str]:
    """The requests sent whose answer no machine stored in the bucket's response cache: the only
    ones a resumed run may send again."""
    stored = set()
    for key in bucket.list("cache/llm/"):
        reply = json.loads(bucket.get(key) or b"{}").get("raw", {}).get("id")
        if reply in server.answered_bodies:
            stored.add(server.answered_bodies[reply])
    return set(server.distinct) - stored

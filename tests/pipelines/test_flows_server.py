"""A real Prefect server on loopback: `synth flows serve` registers a one-minute cron schedule from
flows.yaml, the server schedules a run, the served flow runs it and publishes a dataset version,
and the run is in `synth runs` with its Prefect UI link. Slow (server start-up plus up to a
minute for the schedule), so it runs once, with small settings."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

FLOWS = """\
models:
  dry:
    backend: fake
flows:
  every-minute:
    recipe: multihop
    dataset: scheduled
    schedule: "* * * * *"
    shard_size: 2
    params:
      n: 4
      seed: 2
      hops: [2]
      panel:
        solvers: [{name: a, model: dry, k: 1}, {name: r, baseline: bm25_reader, conditions: [search], k: 1}]
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate, timeout_s: float, what: str, process: subprocess.Popen | None = None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise AssertionError(f"{what}: the process exited with {process.returncode}")
        time.sleep(1)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def prefect_server(tmp_path):
    port = free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           "DO_NOT_TRACK": "1", "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "5"}
    env.pop("PREFECT_API_URL", None)
    (tmp_path / "prefect").mkdir()
    log = open(tmp_path / "server.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(lambda: healthy(api), 180, "the Prefect server to answer /api/health", server)
        yield api
    finally:
        stop(server)
        log.close()


def test_a_served_cron_schedule_runs_and_publishes(tmp_path, prefect_server):
    flows_file = tmp_path / "flows.yaml"
    flows_file.write_text(FLOWS)
    home = tmp_path / "home"
    env = {**os.environ, "PREFECT_API_URL": prefect_server, "SYNTH_HOME": str(home), "PREFECT_HOME": str(tmp_path / "prefect-client")}
    log_path = tmp_path / "serve.log"
    with open(log_path, "w") as log:
        serve = subprocess.Popen([sys.executable, "-m", "synth.cli.main", "flows", "serve", "--flows-file", str(flows_file)],
                                 env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True)
        try:
            def published_run():
                for run_file in (home / "runs").glob("scheduled-*/run.json"):
                    info = json.loads(run_file.read_text())
                    if info.get("status") == "published":
                        return info
                return None

            info = wait_for(published_run, 240, "a scheduled flow run to publish", serve)

            def recorded_run():
                result = subprocess.run([sys.executable, "-m", "synth.cli.main", "runs", "show", info["run_id"], "--json"],
                                        env=env, capture_output=True, text=True)
                return json.loads(result.stdout) if result.returncode == 0 else None

            run = wait_for(recorded_run, 60, "the run's row in the catalog", serve)
        finally:
            stop(serve)
    assert info["version"] == 1
    assert run["status"] == "published" and run["version"] == 1 and run["flow_run_id"]
    assert run["ui_url"].startswith(prefect_server.removesuffix("/api")) and run["flow_run_id"] in run["ui_url"]
    assert run["runner"] == "prefect:ThreadPoolTaskRunner"
    assert run["stages"] == ["attempt-00000", "attempt-00001", "construct"]
    # the run came from the schedule: the server has the deployment and a completed run of it
    request = urllib.request.Request(f"{prefect_server}/flow_runs/{run['flow_run_id']}")
    with urllib.request.urlopen(request, timeout=10) as response:
        flow_run = json.loads(response.read())
    assert flow_run["state_type"] == "COMPLETED" and flow_run["deployment_id"]
    assert "every-minute" in Path(log_path).read_text()

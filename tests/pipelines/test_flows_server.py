"""A real Prefect server on loopback: `synth flows serve` registers a one-minute cron schedule from
flows.yaml, the server schedules a run, the served flow runs it and publishes a dataset version,
and the run is in `synth runs` with its Prefect UI link; `synth flows deploy` registers an entry
on a work pool, whose process worker runs it. Slow (server start-up, up to a minute for the
schedule), so each runs once, with small settings."""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from prefect_server import stop, wait_for  # tests/pipelines is on sys.path

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


def test_a_served_cron_schedule_runs_and_publishes(tmp_path, prefect_server):
    flows_file = tmp_path / "flows.yaml"
    flows_file.write_text(FLOWS)
    home = tmp_path / "home"
    env = {
        **os.environ,
        "PREFECT_API_URL": prefect_server,
        "SYNTH_HOME": str(home),
        "PREFECT_HOME": str(tmp_path / "prefect-client"),
    }
    log_path = tmp_path / "serve.log"
    with open(log_path, "w") as log:
        serve = subprocess.Popen(
            [sys.executable, "-m", "synth.cli.main", "flows", "serve", "--flows-file", str(flows_file)],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
            start_new_session=True,
        )
        try:

            def published_run():
                for run_file in (home / "runs").glob("scheduled-*/run.json"):
                    info = json.loads(run_file.read_text())
                    if info.get("status") == "published":
                        return info
                return None

            info = wait_for(published_run, 240, "a scheduled flow run to publish", serve)

            def recorded_run():
                result = subprocess.run(
                    [sys.executable, "-m", "synth.cli.main", "runs", "show", info["run_id"], "--json"],
                    env=env,
                    capture_output=True,
                    text=True,
                )
                return json.loads(result.stdout) if result.returncode == 0 else None

            run = wait_for(recorded_run, 60, "the run's row in the catalog", serve)
        finally:
            stop(serve)
    assert info["version"] == 1
    assert run["status"] == "published" and run["version"] == 1 and run["flow_run_id"]
    assert run["ui_url"].startswith(prefect_server.removesuffix("/api")) and run["flow_run_id"] in run["ui_url"]
    assert run["runner"] == "prefect:ThreadPoolTaskRunner"
    assert run["stages"] == ["attempt-00000", "attempt-00001", "construct", "label"]
    # the run came from the schedule: the server has the deployment and a completed run of it
    request = urllib.request.Request(f"{prefect_server}/flow_runs/{run['flow_run_id']}")
    with urllib.request.urlopen(request, timeout=10) as response:
        flow_run = json.loads(response.read())
    assert flow_run["state_type"] == "COMPLETED" and flow_run["deployment_id"]
    assert "every-minute" in Path(log_path).read_text()


# the same entry, on a work pool and a daily schedule that never fires during the test
DEPLOYED = (
    FLOWS.replace("every-minute:", "pooled:")
    .replace("dataset: scheduled", "dataset: pooled")
    .replace('schedule: "* * * * *"', 'schedule: "0 3 * * *"\n    work_pool: synth-test-pool')
)


def test_a_deployed_flow_runs_on_a_process_worker_of_its_pool(tmp_path, prefect_server):
    flows_file = tmp_path / "flows.yaml"
    flows_file.write_text(DEPLOYED)
    env = {**os.environ, "PREFECT_API_URL": prefect_server, "SYNTH_HOME": str(tmp_path / "home")}
    prefect = [sys.executable, "-m", "prefect"]

    def run(command, timeout=180):
        result = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=timeout)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        return result.stdout

    run([*prefect, "work-pool", "create", "synth-test-pool", "--type", "process"])
    assert "deployment " in run(
        [sys.executable, "-m", "synth.cli.main", "flows", "deploy", "--flows-file", str(flows_file)]
    )
    run([*prefect, "deployment", "run", "synth-multihop/pooled"])
    run([*prefect, "worker", "start", "--pool", "synth-test-pool", "--run-once"], timeout=300)
    runs = json.loads(run([sys.executable, "-m", "synth.cli.main", "runs", "list", "--json"]))
    assert [(r["dataset"], r["status"], r["version"]) for r in runs] == [("pooled", "published", 1)]
    assert runs[0]["ui_url"].startswith(prefect_server.removesuffix("/api"))

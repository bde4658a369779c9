"""A real Prefect server on loopback: `synth flows serve` registers a one-minute cron schedule from
flows.yaml, the server schedules a run, the served flow runs it and publishes a dataset version,
and the run is in `synth runs` with its Prefect UI link; `synth flows deploy` registers an entry
on a work pool from one folder and virtualenv, and a process worker started from another folder
and virtualenv runs it. Slow (server start-up, up to a minute for the
schedule), so each runs once, with small settings."""

import json
import os
import subprocess
import sys
import sysconfig
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
    planned = [name for name in run["stages"] if not name.startswith("candidates-")]  # and construction's slices
    assert planned == ["attempt-00000", "attempt-00001", "construct", "label"]
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


def other_venv(folder: Path) -> Path:
    """Another virtualenv (its own interpreter and prefix) that sees the packages of this one: the
    worker side of a two-machine setup, on one machine."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    [site_packages] = folder.glob("lib/python*/site-packages")
    ours = sysconfig.get_paths()["purelib"]
    (site_packages / "synth_test_packages.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    return folder / "bin" / "python"


def test_a_deployed_flow_runs_on_a_worker_in_another_folder_and_venv(tmp_path, prefect_server):
    deployer, worker = tmp_path / "deployer", tmp_path / "worker"
    deployer.mkdir()
    worker.mkdir()
    (deployer / "flows.yaml").write_text(DEPLOYED)
    (worker / "flows.yaml").write_text(DEPLOYED)  # the worker's own: it declares the models the entry uses
    python = other_venv(worker / "venv")
    env = {**os.environ, "PREFECT_API_URL": prefect_server}
    deploying = {**env, "SYNTH_HOME": str(deployer / "home"), "PREFECT_HOME": str(deployer / "prefect")}
    working = {
        **env,
        "SYNTH_HOME": str(worker / "home"),
        "SYNTH_FLOWS_FILE": str(worker / "flows.yaml"),
        "PREFECT_HOME": str(worker / "prefect"),
    }
    prefect = [sys.executable, "-m", "prefect"]

    def run(command, cwd, environment, timeout=180, code=0):
        result = subprocess.run(command, env=environment, cwd=cwd, capture_output=True, text=True, timeout=timeout)
        assert result.returncode == code, result.stdout[-2000:] + result.stderr[-2000:]
        return result.stdout + result.stderr

    deploy = [sys.executable, "-m", "synth.cli.main", "flows", "deploy"]
    missing = run(deploy, deployer, deploying, code=2)  # no pool yet: one line naming the command that makes it
    assert (
        "prefect work-pool create synth-test-pool --type process" in missing and len(missing.strip().splitlines()) == 1
    )
    run([*prefect, "work-pool", "create", "synth-test-pool", "--type", "process"], deployer, deploying)
    assert "deployment " in run(deploy, deployer, deploying)
    with urllib.request.urlopen(f"{prefect_server}/deployments/name/synth-multihop/pooled", timeout=10) as response:
        deployment = json.loads(response.read())
    assert deployment["entrypoint"] == "synth.run.flows.multihop_flow" and not deployment["pull_steps"]
    assert str(deployer) not in json.dumps(deployment) and sys.prefix not in json.dumps(deployment)
    # serving the same entry registers its own deployment, so it never replaces the deployed one
    from synth.run.orchestrate import deployments
    from synth.settings import Settings

    served = deployments(Settings(home=deployer / "home"), deployer / "flows.yaml")
    assert [d.name for d in served] == ["pooled-served"]

    run([*prefect, "deployment", "run", "synth-multihop/pooled"], deployer, deploying)
    started = [str(python), "-m", "prefect", "worker", "start", "--pool", "synth-test-pool", "--run-once"]
    log = run(started, worker, working, timeout=300)
    assert str(worker / "venv") in run([str(python), "-c", "import sys; print(sys.prefix)"], worker, working)
    runs = json.loads(run([str(python), "-m", "synth.cli.main", "runs", "list", "--json"], worker, working))
    assert [(r["dataset"], r["status"], r["version"]) for r in runs] == [("pooled", "published", 1)], log[-2000:]
    assert runs[0]["ui_url"].startswith(prefect_server.removesuffix("/api"))
    assert not (deployer / "home" / "runs").exists()  # nothing ran on the deploying side

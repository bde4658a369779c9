"""`synth flows run` SIGKILLed (with its temporary Prefect server) after its first panel shard:
the rerun resumes the same run and sends no request about the finished shard's items."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from fault_server import FaultServer  # noqa: E402

FLOWS = """\
models:
  served:
    backend: openai
    model: smol
    endpoints: [{url}]
flows:
  killed:
    recipe: multihop
    dataset: killed
    shard_size: 4
    params:
      n: 12
      seed: 6
      hops: [2]
      panel:
        solvers: [{{name: s, model: served, k: 1}}, {{name: r, baseline: bm25_reader, conditions: [search], k: 1}}]
"""


def test_a_killed_flow_run_resumes_from_its_finished_shards(tmp_path):
    server = FaultServer(latency_s=0.05).start_in_thread()
    flows = tmp_path / "flows.yaml"
    flows.write_text(FLOWS.format(url=server.url))
    home = tmp_path / "home"
    env = {**os.environ, "SYNTH_HOME": str(home)}
    env.pop("PREFECT_HOME", None)  # synth puts Prefect's home under the data root itself
    command = [sys.executable, "-m", "synth.cli.main", "flows", "run", "killed", "--flows-file", str(flows), "--json"]
    try:
        first = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
        )
        deadline = time.monotonic() + 240
        while not list((home / "runs").glob("killed-*/attempt-00000/stage.json")):
            assert first.poll() is None, first.stdout.read().decode()[-3000:]
            assert time.monotonic() < deadline, "the first shard never finished"
            time.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
        assert not list((home / "runs").glob("killed-*/attempt-00002/stage.json")), "the kill should land mid-run"
        sent_before = len(server.requests)
        rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stdout[-2000:] + rerun.stderr[-2000:]
    finally:
        server.stop()
    result = json.loads(rerun.stdout[rerun.stdout.index("{") : rerun.stdout.rindex("}") + 1])
    assert result["items"] > 0 and (home / "prefect").is_dir()  # Prefect's database lives under the data root
    run_dir = next((home / "runs").glob("killed-*"))
    questions = pq.read_table(run_dir / "construct" / "items").column("question").to_pylist()
    first_shard = [
        json.dumps(question, ensure_ascii=False)[1:-1] for question in questions[:4]
    ]  # as they appear in a body
    after_kill = [json.dumps(request, ensure_ascii=False) for request in server.requests[sent_before:]]
    before_kill = [json.dumps(request, ensure_ascii=False) for request in server.requests[:sent_before]]
    assert all(any(question in body for body in before_kill) for question in first_shard)  # the check below can fail
    assert after_kill, "the rerun had shards left to do"
    assert not any(question in body for body in after_kill for question in first_shard), "the finished shard was redone"
    shown = subprocess.run(
        [sys.executable, "-m", "synth.cli.main", "runs", "show", result["run_id"], "--json"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    run = json.loads(shown.stdout)
    assert run["status"] == "published" and {"construct", "attempt-00000"} <= set(run["resumed_stages"])

"""`synth generate` killed during the solver panel resumes without paying for any answered model call."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from synth.llm.cache import ResponseCache

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from fault_server import FaultServer  # noqa: E402

PANEL = (
    "panel.solvers=[{name: served, model: served, k: 2}, "
    "{name: reader, baseline: bm25_reader, conditions: [search], k: 1}]"
)


def test_a_run_killed_mid_panel_reuses_every_completed_call(tmp_path):
    server = FaultServer(latency_s=0.05).start_in_thread()
    flows = tmp_path / "flows.yaml"
    flows.write_text(f"models:\n  served:\n    backend: openai\n    model: smol\n    endpoints: [{server.url}]\n")
    env = {**os.environ, "SYNTH_HOME": str(tmp_path / "home")}
    cache_path = tmp_path / "home" / "cache" / "llm.sqlite"
    command = [
        sys.executable,
        "-c",
        "from synth.cli.main import main; main()",
        "generate",
        "--recipe",
        "multihop",
        "--n",
        "12",
        "--seed",
        "2",
        "--param",
        "hops=[2,3]",
        "--param",
        PANEL,
        "--flows-file",
        str(flows),
        "--quiet",
        "--json",
    ]
    try:
        first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # closed-book answers are in: the panel is under way
            if cache_path.exists() and len(ResponseCache(cache_path)) >= 12:
                break
            assert first.poll() is None, first.stderr.read().decode()[-2000:]
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait()
        time.sleep(0.3)
        answered_before = len(ResponseCache(cache_path))
        calls_before = len(server.requests)

        rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
    finally:
        server.stop()
    summary = json.loads(rerun.stdout)["summary"]["llm"]
    assert 12 <= answered_before < summary["llm_requests"], "the kill should land mid-panel"
    assert summary["llm_cache_hits"] == answered_before  # every answered call came from the cache ...
    assert server.sent_since(calls_before) == summary["llm_requests"] - answered_before  # ... only the rest sent

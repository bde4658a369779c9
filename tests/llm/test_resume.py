"""Killing a run midway and rerunning it makes no model call that was already answered."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from fault_server import FaultServer

from synth.llm.cache import ResponseCache

RUN = Path(__file__).with_name("resumable_run.py")


def test_a_killed_run_resumes_without_repeating_any_answered_call(tmp_path):
    server = FaultServer(latency_s=0.02).start_in_thread()
    cache_path = tmp_path / "llm.sqlite"
    command = [sys.executable, str(RUN), server.url, str(cache_path), "200"]
    try:
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if cache_path.exists() and len(ResponseCache(cache_path)) >= 50:
                break
            assert first.poll() is None, first.stderr.read().decode()
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.wait()
        time.sleep(0.3)  # let the server finish reading whatever the dead run had already sent
        answered_before = len(ResponseCache(cache_path))
        assert 50 <= answered_before < 200, "the kill should land mid-run"
        calls_before = len(server.requests)

        rerun = subprocess.run(command, capture_output=True, text=True, timeout=120)
        assert rerun.returncode == 0, rerun.stderr
        summary = json.loads(rerun.stdout)
    finally:
        server.stop()
    assert summary["llm_cache_hits"] == answered_before
    assert summary["llm_cache_misses"] == 200 - answered_before
    # every call not answered before is sent once; a hedge (the marked twin of an overdue attempt) is a
    # deliberate second try within the rerun, not a repeat of an answered call
    assert server.sent_since(calls_before) == 200 - answered_before
    assert len(ResponseCache(cache_path)) == 200

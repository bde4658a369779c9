"""`synth generate --recipe selfplay` SIGKILLed in the middle of a round resumes the same run: the
finished round is not played again and no answered model call is sent again."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from synth.llm.cache import ResponseCache

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))

from fault_server import FaultServer  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.jsonl"
ROUND = 4 * 4  # 4 targets x (2 searches + 2 extra turns): the loopback server never writes a question


def test_a_run_killed_mid_round_resumes_and_sends_no_answered_call_again(tmp_path):
    server = FaultServer(latency_s=0.3).start_in_thread()
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
        "selfplay",
        "--param",
        f"world.corpus={CORPUS}",
        "--param",
        "rounds=3",
        "--param",
        "per_round=4",
        "--llm",
        "served",
        "--flows-file",
        str(flows),
        "--quiet",
        "--json",
    ]
    runs = tmp_path / "home" / "runs"
    try:
        first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # round 1 saved and round 2's first turn answered: kill mid-round
            if any(runs.glob("*/round-00000/stage.json")) and len(ResponseCache(cache_path)) > ROUND:
                break
            assert first.poll() is None, first.stderr.read().decode()[-2000:]
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.wait()
        [run] = list(runs.iterdir())
        assert not (run / "round-00001" / "stage.json").exists(), "the kill should land inside round 2"
        saved_round = (run / "round-00000" / "stage.json").stat().st_mtime_ns
        answered_before, calls_before = len(ResponseCache(cache_path)), len(server.requests)

        rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        # the loopback server never writes a question: the finished run publishes nothing and says so
        assert rerun.returncode == 6 and "nothing was published" in rerun.stderr, rerun.stderr[-2000:]
    finally:
        server.stop()
    assert list(runs.iterdir()) == [run] and (run / "round-00000" / "stage.json").stat().st_mtime_ns == saved_round
    answered_after = len(ResponseCache(cache_path))
    assert answered_after == 3 * ROUND + 1  # and the one reasoning probe of a model declared `reasoning: auto`
    assert server.sent_since(calls_before) == answered_after - answered_before  # only unanswered calls were sent

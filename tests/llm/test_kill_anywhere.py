"""A run SIGKILLed at any step of publishing, or mid-stage right after an answer arrived, and
then rerun, leaves exactly one published version, no staging folder, and a server that received
each distinct request exactly once (one request in flight at a time, so none is lost in flight).
A kill as a stage is saved is the exception: a streaming run has the next item's request in
flight then, never answered to the dead process, and the rerun sends that one again."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from fault_server import FaultServer

KILL = Path(__file__).with_name("kill_point.py")


@pytest.fixture
def served(tmp_path):
    server = FaultServer().start_in_thread()
    flows = tmp_path / "flows.yaml"
    flows.write_text(
        json.dumps(
            {
                "models": {
                    "served": {"backend": "openai", "model": "smol", "endpoints": [server.url], "max_concurrency": 1}
                },
                "flows": {},
            }
        )
    )
    yield server, str(flows)
    server.stop()


def _args(flows: str) -> list[str]:
    return ["generate", "--recipe", "multihop", "--n", "8", "--llm", "served", "--flows-file", flows, "--quiet"]


@pytest.mark.parametrize(
    "point, count",
    [
        ("answer", 4),
        ("answer", 21),
        ("stage", 1),
        ("stage", 2),
        ("stage", 3),
        ("reserve", 1),
        ("staged", 1),
        ("renamed", 1),
        ("committed", 1),
        ("marked", 1),
    ],
)
def test_a_kill_anywhere_then_a_rerun_publishes_once_and_sends_nothing_twice(served, run_cli, point, count):
    server, flows = served
    killed = subprocess.run(
        [sys.executable, str(KILL), point, str(count), *_args(flows)], capture_output=True, text=True, timeout=300
    )
    assert killed.returncode == -9, killed.stderr
    code, _, err = run_cli(*_args(flows))
    assert code == 0, err

    code, out, _ = run_cli("datasets", "list", "--all", "--json")
    published = [version for version in json.loads(out) if version["status"] == "published"]
    assert len(published) == 1
    home = Path(os.environ["SYNTH_HOME"])
    assert not [path for path in (home / "datasets").rglob("*") if ".partial" in path.name]
    assert server.distinct and _resent(server) <= (1 if point == "stage" else 0), "a request was sent twice"
    code, out, _ = run_cli("runs", "list", "--json")
    assert [run["status"] for run in json.loads(out)] == ["published"]


STREAMED = ["--param", "distill.enabled=true", "--param", "distill.n=1", "--shard-size", "2"]
"""A run whose items go on to the teacher while others are still with the panel: 193 answers, and
10 stages saved (construction, 4 panel slices, the label, 4 distillation slices)."""


@pytest.mark.parametrize(
    "point, count",
    [("answer", count) for count in sorted(random.Random(40).sample(range(2, 190), 4))]
    + [("stage", count) for count in sorted(random.Random(41).sample(range(1, 10), 3))],
)
def test_a_streaming_run_killed_at_random_points_resumes_sending_nothing_twice(served, run_cli, point, count):
    server, flows = served
    killed = subprocess.run(
        [sys.executable, str(KILL), point, str(count), *_args(flows), *STREAMED],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -9, killed.stderr
    code, _, err = run_cli(*_args(flows), *STREAMED)
    assert code == 0, err
    code, out, _ = run_cli("datasets", "list", "--all", "--json")
    published = [version for version in json.loads(out) if version["status"] == "published"]
    assert len(published) == 1 and published[0]["row_counts"]["trajectories"] > 0
    # Right after an answer is stored nothing else is in flight (one request at a time); a kill as a
    # stage is saved may catch another item's request in flight, never answered to the dead process,
    # which the rerun sends again: at most that one. Every answered request is sent exactly once.
    resent = _resent(server)
    assert server.distinct and resent <= (0 if point == "answer" else 1), f"{resent} requests sent twice"


def _resent(server: FaultServer) -> int:
    """Requests the server received more than once, counted beyond the first time; a hedge (the twin
    of an overdue attempt, marked as one) is a deliberate second try within the run, not a resend."""
    return sum(max(0, count - 1 - server.hedges[body]) for body, count in server.distinct.items())


def test_a_second_process_with_the_same_run_is_turned_away(served, run_cli):
    server, flows = served
    server.latency_s = 0.2  # keep the first run busy
    first = subprocess.Popen([sys.executable, "-m", "synth.cli.main", *_args(flows)], stderr=subprocess.PIPE, text=True)
    try:
        while not server.requests:  # the first run holds its run folder once it calls the model
            assert first.poll() is None, first.stderr.read()
        code, _, err = run_cli(*_args(flows))
        assert code == 5 and "already being made by" in err and len(err.strip().splitlines()) == 1
        assert first.wait(timeout=300) == 0, first.stderr.read()
    finally:
        first.kill()
    code, out, _ = run_cli("datasets", "list", "--all", "--json")
    assert [version["status"] for version in json.loads(out)] == ["published"]
    assert max(server.distinct.values()) == 1


def test_two_runs_of_different_datasets_both_publish(served):
    server, flows = served
    runs = [
        subprocess.Popen(
            [sys.executable, "-m", "synth.cli.main", *_args(flows), "--name", name], stderr=subprocess.PIPE, text=True
        )
        for name in ("left", "right")
    ]
    for run in runs:
        assert run.wait(timeout=300) == 0, run.stderr.read()
    listed = subprocess.run(
        [sys.executable, "-m", "synth.cli.main", "datasets", "list", "--json"], capture_output=True, text=True
    )
    assert sorted(version["name"] for version in json.loads(listed.stdout)) == ["left", "right"]

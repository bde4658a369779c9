"""A run SIGKILLed at any step of publishing, or mid-stage right after an answer arrived, and
then rerun, leaves exactly one published version, no staging folder, and a server that received
each distinct request once: an answer the killed run stored is never paid for again. Only the
requests it had in flight at the kill (sent, answer not yet stored) are sent again; with one slot
those are the one out plus the stragglers that gave their slot away, which a loaded machine makes
(an attempt past its straggler time lets the next request go out), so they are read from the
cache the killed run left, not assumed."""

import json
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from fault_server import FaultServer

from synth.llm.openai_http import STRAGGLERS_PER_SLOT
from synth.settings import Settings

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
    in_flight = _in_flight_at_kill(server)
    code, _, err = run_cli(*_args(flows))
    assert code == 0, err

    code, out, _ = run_cli("datasets", "list", "--all", "--json")
    published = [version for version in json.loads(out) if version["status"] == "published"]
    assert len(published) == 1
    home = Path(os.environ["SYNTH_HOME"])
    assert not [path for path in (home / "datasets").rglob("*") if ".partial" in path.name]
    assert server.distinct and not _paid_twice(server, in_flight), "a stored answer's request was sent again"
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
    in_flight = _in_flight_at_kill(server)
    before = dict(server.distinct)  # what the killed run sent, for the message below
    code, _, err = run_cli(*_args(flows), *STREAMED)
    assert code == 0, err
    code, out, _ = run_cli("datasets", "list", "--all", "--json")
    published = [version for version in json.loads(out) if version["status"] == "published"]
    assert len(published) == 1 and published[0]["row_counts"]["trajectories"] > 0
    paid_twice = _paid_twice(server, in_flight)
    assert server.distinct and not paid_twice, (
        f"{len(paid_twice)} requests sent again though their answer was stored: "
        + "; ".join(_sendings(server, body, before, in_flight) for body in paid_twice)
        + f"; the rerun's retries by stage: {_retries(run_cli)}"
    )


def test_a_kill_with_a_straggler_out_resends_only_what_was_in_flight(served, run_cli):
    """A server with a long tail: every 4th request hangs, gives its slot away as a straggler, and the
    next ones are answered and stored while it is out, as a loaded machine makes happen now and then.
    A kill right after the 6th answer (the 4th request still out) resends that one only."""
    server, flows = served
    server.slow_every, server.slow_s = 4, 30.0
    killed = subprocess.run(
        [sys.executable, str(KILL), "answer", "6", *_args(flows)], capture_output=True, text=True, timeout=300
    )
    assert killed.returncode == -9, killed.stderr
    in_flight = _in_flight_at_kill(server)
    assert len(in_flight) == 1, "the straggler was not out at the kill"
    server.slow_every, server.slow_s = 0, 0.0
    code, _, err = run_cli(*_args(flows))
    assert code == 0, err
    assert not _paid_twice(server, in_flight), "a stored answer's request was sent again"
    assert all(server.distinct[body] - server.hedges[body] == 2 for body in in_flight), "an in-flight one was lost"


def _in_flight_at_kill(server: FaultServer) -> set[str]:
    """The requests the killed run sent whose answer it never stored (the cache it left names each
    stored answer's reply id): the only ones a rerun may send again. One slot bounds them: the
    request out, and the stragglers that gave their slot away."""
    replies = []
    if Settings().llm_cache_path.exists():  # a kill before the first call leaves none
        with sqlite3.connect(Settings().llm_cache_path) as cache:
            replies = [json.loads(row)["raw"].get("id") for (row,) in cache.execute("select response from responses")]
    stored = {server.answered_bodies[reply] for reply in replies if reply in server.answered_bodies}
    in_flight = set(server.distinct) - stored
    assert len(in_flight) <= 1 + STRAGGLERS_PER_SLOT, f"{len(in_flight)} requests out at once with one slot"
    return in_flight


def _sendings(server: FaultServer, body: str, before: dict[str, int], in_flight: set[str]) -> str:
    """Who sent `body` how often: the killed run, the rerun, and how many were marked hedges (an
    intermittent failure of this test should say which run sent the twin)."""
    answered = sum(1 for answered_body in server.answered_bodies.values() if answered_body == body)
    return (
        f"sent {before.get(body, 0)}x by the killed run and {server.distinct[body] - before.get(body, 0)}x by the "
        f"rerun, {server.hedges[body]} marked hedges, {answered} answered, "
        f"{'in flight' if body in in_flight else 'stored'} at the kill, "
        f"the request's last words: {body[-160:]!r}"
    )


def _paid_twice(server: FaultServer, in_flight: set[str]) -> list[str]:
    """Requests the server received more often than once, plus their hedges (an overdue attempt's
    marked twin, a deliberate second try within a run), plus one resend if it was in flight at the kill."""
    return [body for body, count in server.distinct.items() if count - server.hedges[body] > 1 + (body in in_flight)]


def _retries(run_cli) -> dict[str, dict[str, int]]:
    """Each stage's retries by reason in the rerun's summary (hedges, faults): what a twin came from."""
    code, out, _ = run_cli("runs", "list", "--json")
    runs = json.loads(out) if code == 0 else []
    stages = (runs[0]["summary"] or {}).get("llm", {}).get("by_stage_model", {}) if runs else {}
    return {stage: entry["retries"] for stage, entry in stages.items() if entry["retries"]}


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
    assert max(count - server.hedges[body] for body, count in server.distinct.items()) == 1


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

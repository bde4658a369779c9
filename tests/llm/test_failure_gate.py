"""A run whose model server fails publishes nothing and says why in one line; a server that
fails only the first tries of each request costs retries, which the summary shows by reason."""

import json
import socket

import pytest
from fault_server import FaultServer


def _flows(tmp_path, url: str, **spec) -> str:
    """The fault server answers nonsense: the embedded model's small agent budgets keep its runs short."""
    model = {
        "backend": "openai",
        "model": "smol",
        "endpoints": [url],
        # a healthy answer must never be taken for a hung one on a loaded machine (CI runs three
        # test workers): only the test of the timeout fault itself shortens this
        "timeout_s": 10,
        "max_attempts": 3,
        "budgets": "embedded",
        "give_up_s": 2,  # a dead server is given up on in 2 s, not a minute: the same path, shorter
        **spec,
    }
    path = tmp_path / "flows.yaml"
    path.write_text(json.dumps({"models": {"served": model}, "flows": {}}))
    return str(path)


def _generate(run_cli, flows: str, *extra: str):
    return run_cli(
        "generate", "--recipe", "multihop", "--n", "10", "--llm", "served", "--flows-file", flows, "--quiet", *extra
    )


def _published(run_cli) -> list:
    code, out, _ = run_cli("datasets", "list", "--all", "--json")
    assert code == 0
    return [version for version in json.loads(out) if version["status"] == "published"]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize(
    "fault, reason",
    [
        ("500", "http_500"),
        ("429", "http_429"),
        ("timeout", "timeout"),
        ("truncated_json", "malformed_response"),
        ("empty_choices", "malformed_response"),
    ],
)
def test_a_server_failing_every_call_stops_the_run_unpublished(tmp_path, run_cli, fault, reason):
    server = FaultServer(always=fault, hang_s=3).start_in_thread()
    try:
        code, _, err = _generate(run_cli, _flows(tmp_path, server.url, timeout_s=1))
    finally:
        server.stop()
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 3, err
    assert len(lines) == 1 and reason in lines[0] and "openai:smol" in lines[0] and server.url in lines[0]
    assert "rerun" in lines[0] and "nothing was published" in lines[0]
    assert _published(run_cli) == []


def test_a_refused_connection_stops_the_run_unpublished(tmp_path, run_cli):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    code, _, err = _generate(run_cli, _flows(tmp_path, url))
    assert code == 3 and "connection_refused" in err and url in err
    assert _published(run_cli) == []


def test_faults_on_the_first_tries_only_are_retried_and_counted(tmp_path, run_cli):
    server = FaultServer(always="500", fail_first=2).start_in_thread()
    try:
        code, out, err = _generate(run_cli, _flows(tmp_path, server.url, max_attempts=4, hedge=False), "--json")
    finally:
        server.stop()
    assert code == 0, err
    version = json.loads(out)
    llm = version["summary"]["llm"]
    assert llm["llm_retries"] == {"http_500": 2 * len(server.distinct)}
    assert llm["llm_sent"] == len(server.requests) == 3 * len(server.distinct)
    assert max(server.distinct.values()) == 3
    assert llm["llm_failures"] == {}


def test_a_rerun_after_the_fix_resumes_and_sends_only_what_never_got_an_answer(tmp_path, run_cli):
    server = FaultServer(always="500").start_in_thread()
    try:
        # declared without reasoning (no probe) nor hedging (no twin of a slow try on a loaded
        # machine): this test counts every request on the wire
        flows = _flows(tmp_path, server.url, max_attempts=1, reasoning="off", hedge=False)
        server.always = None
        server.inject(*["500"] * 8)  # the first 8 calls fail, the rest are answered: above the gate
        code, _, err = _generate(run_cli, flows)
        assert code == 3, err
        answered = dict(server.distinct)
        code, out, err = _generate(run_cli, flows, "--json")
        assert code == 0, err
    finally:
        server.stop()
    failed_first = [body for body, count in server.distinct.items() if body in answered and count > answered[body]]
    assert len(failed_first) == 8  # each of those was sent again, once
    assert all(count <= 2 for count in server.distinct.values())
    assert len(_published(run_cli)) == 1
    assert json.loads(out)["summary"]["llm"]["llm_failures"] == {}


def test_while_the_reasoning_probe_fails_nothing_else_is_sent_and_a_rerun_reuses_its_answer(tmp_path, run_cli):
    """`reasoning: auto` (the default for served models) asks one probe before the model's first
    request; requests are never sent in a shape that might not fit the model, so while the probe
    fails they fail unsent, and once it is answered the rerun takes that answer from the cache."""
    server = FaultServer(always="500").start_in_thread()
    try:
        flows = _flows(tmp_path, server.url, max_attempts=1)
        code, _, err = _generate(run_cli, flows)
        assert code == 3 and "http_500" in err, err
        probes = [request for request in server.requests if "17 + 25" in request["messages"][0]["content"]]
        assert len(server.requests) == len(probes)  # only probes went out
        sent = len(server.requests)
        server.always = None
        code, out, err = _generate(run_cli, flows, "--json")
        assert code == 0, err
        probes = [request for request in server.requests if "17 + 25" in request["messages"][0]["content"]]
        assert len(probes) == sent + 1  # answered once in the rerun, then from the cache
    finally:
        server.stop()


def test_a_budget_stops_the_run_resumably_and_says_so(run_cli):
    args = ("generate", "--recipe", "multihop", "--n", "10", "--llm", "fake", "--quiet")
    code, _, err = run_cli(*args, "--max-tokens", "500")
    assert code == 4 and "stopped by the budget (max_tokens=500)" in err and "nothing was published" in err
    assert _published(run_cli) == []
    code, out, _ = run_cli("runs", "list", "--json")
    (stopped,) = json.loads(out)
    assert stopped["status"] == "stopped" and stopped["summary"]["llm"]["budget_exhausted"]
    assert stopped["summary"]["llm"]["prompt_tokens"] + stopped["summary"]["llm"]["completion_tokens"] <= 500

    code, out, err = run_cli(*args, "--json")
    assert code == 0, err
    code, out, _ = run_cli("runs", "list", "--json")
    (resumed,) = json.loads(out)
    assert resumed["run_id"] == stopped["run_id"] and resumed["status"] == "published"
    assert "construct" in resumed["resumed_stages"]

"""The HTTP backend against a real OpenAI-compatible server on loopback that injects faults."""

import asyncio
import logging
import socket

import pytest
from fault_server import FaultServer  # tests/llm is on sys.path (pytest rootdir-relative imports)

from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.openai_http import OpenAICompatibleBackend, _retry_after
from synth.llm.reasoning import OFF
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure, SamplingParams

SECRET = "sk-test-do-not-log-0123456789"


@pytest.fixture
def server():
    server = FaultServer(hang_s=3.0).start_in_thread()
    yield server
    server.stop()


def backend_for(*urls: str, **options) -> OpenAICompatibleBackend:
    """A quick-retrying client of a model declared without reasoning (no probe: these tests count requests)."""
    options = {
        "backoff_base_s": 0.01,
        "backoff_cap_s": 0.05,
        "timeout_s": 2.0,  # below the hang (3 s), far above a healthy answer on a loaded machine
        "max_attempts": 4,
        "reasoning": OFF,
        **options,
    }
    return OpenAICompatibleBackend("smol", list(urls), api_key=SECRET, **options)


def ask(*texts: str, **request) -> list[ChatRequest]:
    return [ChatRequest(messages=[{"role": "user", "content": text}], **request) for text in texts]


def run(backend: OpenAICompatibleBackend, requests: list[ChatRequest]):
    async def go():
        try:
            return await backend.complete(requests)
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_answers_come_back_in_order_with_usage_and_raw(server):
    results = run(backend_for(server.url), ask("alpha", "beta", "gamma"))
    assert [result.text for result in results] == ["reply to: alpha", "reply to: beta", "reply to: gamma"]
    assert all(result.usage.prompt_tokens == 1 and result.usage.completion_tokens == 3 for result in results)
    assert results[0].raw["object"] == "chat.completion"
    assert results[0].model == "openai:smol"


@pytest.mark.parametrize(
    "fault", ["429", "500", "503", "timeout", "reset", "truncated", "truncated_json", "malformed", "html"]
)
def test_every_transient_fault_is_retried_until_answered(server, fault):
    server.inject(fault, fault)
    backend = backend_for(server.url)
    [result] = run(backend, ask("hello"))
    assert isinstance(result, ChatResponse), result
    assert result.text == "reply to: hello"
    assert sum(backend.retries.values()) == 2


@pytest.mark.parametrize(
    "fault, reason",
    [
        ("500", "http_500"),
        ("timeout", "timeout"),
        ("truncated_json", "malformed_response"),
        ("truncated", "truncated_response"),
        ("reset", "connection_dropped"),
        ("html", "malformed_response"),
    ],
)
def test_a_fault_that_persists_is_recorded_with_reason_and_attempts(server, fault, reason):
    server.inject(*[fault] * 4)
    [result] = run(backend_for(server.url, max_attempts=4), ask("hello"))
    assert isinstance(result, LLMFailure)
    assert result.reason == reason and result.attempts == 4


def test_a_client_error_is_not_retried_and_keeps_the_body(server):
    server.inject("400")
    backend = backend_for(server.url)
    [result] = run(backend, ask("hello"))
    assert isinstance(result, LLMFailure) and result.reason == "http_400" and result.attempts == 1
    assert "injected 400" in result.raw
    assert len(server.requests) == 1


def test_a_mixed_storm_of_faults_loses_nothing_and_mixes_nothing_up(server):
    server.inject(*["429", "500", "reset", "truncated_json", "malformed", "503", "truncated", "timeout"] * 2)
    texts = [f"question {index}" for index in range(40)]
    results = run(backend_for(server.url, max_attempts=6), ask(*texts))
    assert [result.text for result in results] == [f"reply to: {text}" for text in texts]


def test_concurrency_is_cut_on_429_and_grows_back(server):
    server.capacity = 4
    backend = backend_for(server.url, max_concurrency=32, max_attempts=30)
    server.latency_s = 0.02
    results = run(backend, ask(*[f"q{index}" for index in range(120)]))
    assert all(isinstance(result, ChatResponse) for result in results)
    assert backend.limiter.cuts >= 1 and backend.limiter.limit < 32
    cut_to = backend.limiter.limit
    server.capacity = None
    run(backend, ask(*[f"r{index}" for index in range(300)]))
    assert backend.limiter.limit > cut_to


def test_load_is_spread_over_replicas_and_a_dead_one_is_avoided():
    first, second = FaultServer(latency_s=0.01).start_in_thread(), FaultServer(latency_s=0.01).start_in_thread()
    with socket.socket() as probe:  # a port nobody listens on: connections are refused
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    try:
        backend = backend_for(first.url, second.url, dead, max_concurrency=16)
        results = run(backend, ask(*[f"q{index}" for index in range(90)]))
        assert all(isinstance(result, ChatResponse) for result in results)
        assert first.answered > 20 and second.answered > 20
        assert backend.retries.get("connection_refused", 0) <= 16  # the dead replica is skipped once it failed
    finally:
        first.stop()
        second.stop()


def test_tools_json_schema_sampling_and_the_key_reach_the_server(server):
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    schema = {"title": "Answer", "type": "object", "properties": {"answer": {"type": "string"}}}
    [called] = run(
        backend_for(server.url), ask("find x", tools=tools, sampling=SamplingParams(n=2, seed=7, stop=["\n"]))
    )
    [structured] = run(backend_for(server.url), ask("say y", json_schema=schema))
    assert [completion.tool_calls[0].function.name for completion in called.completions] == ["search", "search"]
    assert called.completions[0].finish_reason == "tool_calls"
    assert structured.text == '{"answer": "say y"}'
    first, second = server.requests
    assert first["n"] == 2 and first["seed"] == 7 and first["stop"] == ["\n"] and first["tools"] == tools
    assert second["response_format"] == {"type": "json_schema", "json_schema": {"name": "Answer", "schema": schema}}
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"


def test_the_api_key_is_never_logged_or_shown(server, caplog):
    caplog.set_level(logging.DEBUG)
    server.inject("429", "500", "400")
    backend = backend_for(server.url)
    results = run(backend, ask("a", "b"))
    assert SECRET not in repr(backend) and SECRET not in caplog.text
    assert all(SECRET not in result.model_dump_json() for result in results)


def test_retry_after_reads_seconds_and_http_dates():
    assert _retry_after("3") == 3.0
    assert _retry_after(None) is None and _retry_after("soon") is None
    assert _retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0


def test_a_rerun_through_the_cache_sends_nothing_already_answered(server, tmp_path):
    cache = ResponseCache(tmp_path / "llm.sqlite")
    texts = [f"q{index}" for index in range(10)]

    async def go(requests):
        client = LLMClient(backend_for(server.url), cache=cache)
        try:
            return await client.complete(requests), client.ledger.summary()
        finally:
            await client.aclose()

    asyncio.run(go(ask(*texts[:6])))
    results, summary = asyncio.run(go(ask(*texts)))
    assert [result.text for result in results] == [f"reply to: {text}" for text in texts]
    assert summary["llm_cache_hits"] == 6 and summary["llm_cache_misses"] == 4
    assert len(server.requests) == 10


def test_a_long_retry_after_is_cut_to_the_cap_and_said_so(server):
    server.retry_after = "3600"
    server.inject("429")
    said = []
    backend = backend_for(server.url, max_retry_after_s=0.1, log=said.append)
    (result,) = run(backend, ask("wait for me"))
    assert isinstance(result, ChatResponse) and result.attempts == 2 and result.retries == {"http_429": 1}
    assert len(said) == 1 and "3600 s" in said[0] and "max_retry_after_s" in said[0]


def test_the_circuit_opens_on_a_server_that_fails_everything_and_stops_sending():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    from synth.llm.concurrency import CircuitBreaker

    backend = backend_for(
        f"http://127.0.0.1:{port}/v1",
        max_attempts=6,
        max_concurrency=2,
        breaker=CircuitBreaker(threshold=4, window_s=0.0, give_up_s=0.5),
    )
    results = run(backend, ask(*[f"q{index}" for index in range(40)]))
    assert all(isinstance(result, LLMFailure) and result.reason == "connection_refused" for result in results)
    assert backend.sent < 20  # without the breaker: 40 requests x 6 attempts
    assert any(result.attempts == 0 and "not sent" in result.detail for result in results)


def test_slow_requests_are_reported_while_they_wait(server):
    server.inject("timeout")
    said = []
    backend = backend_for(server.url, timeout_s=2.0, slow_after_s=0.3, log=said.append)
    (result,) = run(backend, ask("slow one"))
    assert isinstance(result, ChatResponse) and result.retries == {"timeout": 1}
    assert said and all("1 requests waiting" in line and server.url in line for line in said)


def test_an_open_circuit_waits_for_a_probe_and_loses_nothing_of_a_server_that_recovers():
    from synth.llm.concurrency import CircuitBreaker

    server = FaultServer(always="500", fail_first=2).start_in_thread()
    try:
        backend = backend_for(
            server.url, max_attempts=3, breaker=CircuitBreaker(threshold=4, window_s=0.0, max_probe_gap_s=0.2)
        )
        results = run(backend, ask(*[f"q{index}" for index in range(12)]))
    finally:
        server.stop()
    assert backend.breaker.trips >= 1  # the circuit did open ...
    assert all(isinstance(result, ChatResponse) for result in results)  # ... and every request was answered
    assert max(server.distinct.values()) == 3

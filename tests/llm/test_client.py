"""Cache, accounting, budget and structured output, driven by the scripted fake backend."""

import asyncio
import json
import multiprocessing

import pytest
from pydantic import BaseModel

from synth.llm.accounting import Budget, Ledger, Price
from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.fake import ScriptedBackend, dry_run_reply
from synth.llm.structured import Structured, StructuredFailure, complete_structured
from synth.llm.types import ChatRequest, Completion, LLMFailure, SamplingParams
from synth.schemas import FunctionCall, ToolCall


def ask(text: str, **changes) -> ChatRequest:
    return ChatRequest(messages=[{"role": "user", "content": text}], **changes)


def run(coroutine):
    return asyncio.run(coroutine)


def test_fake_answers_in_order_records_requests_and_counts_words():
    backend = ScriptedBackend(["one two", "three"])
    client = LLMClient(backend)
    results = run(client.complete([ask("a b c"), ask("d")]))
    assert [result.text for result in results] == ["one two", "three"]
    assert [request.messages[0]["content"] for request in backend.requests] == ["a b c", "d"]
    assert (results[0].usage.prompt_tokens, results[0].usage.completion_tokens) == (3, 2)


def test_cache_hits_spend_nothing_and_are_counted(tmp_path):
    cache = ResponseCache(tmp_path / "llm.sqlite")
    first = LLMClient(ScriptedBackend(["x", "y"]), cache)
    run(first.complete([ask("q1"), ask("q2")]))
    backend = ScriptedBackend(["should not be used"])
    second = LLMClient(backend, ResponseCache(tmp_path / "llm.sqlite"))
    results = run(second.complete([ask("q1"), ask("q2"), ask("q3")]))
    assert [result.text for result in results] == ["x", "y", "should not be used"]
    assert [result.cached for result in results] == [True, True, False]
    assert len(backend.requests) == 1
    summary = second.ledger.summary()
    assert (summary["llm_requests"], summary["llm_cache_hits"], summary["llm_cache_misses"]) == (3, 2, 1)
    assert summary["completion_tokens"] == 4  # only the fresh answer's words


def test_cache_key_covers_model_sampling_seed_schema_and_tools(tmp_path):
    cache = ResponseCache(tmp_path / "llm.sqlite")
    run(LLMClient(ScriptedBackend(name="a"), cache).complete([ask("q")]))
    variants = [
        (ScriptedBackend(name="b"), ask("q")),
        (ScriptedBackend(name="a"), ask("q", sampling=SamplingParams(seed=1))),
        (ScriptedBackend(name="a"), ask("q", sampling=SamplingParams(temperature=0.0))),
        (ScriptedBackend(name="a"), ask("q", json_schema={"type": "object"})),
        (ScriptedBackend(name="a"), ask("q", tools=[{"type": "function", "function": {"name": "search"}}])),
    ]
    for backend, request in variants:
        assert run(LLMClient(backend, cache).complete([request]))[0].cached is False
    assert run(LLMClient(ScriptedBackend(name="a"), cache).complete([ask("q", stage="other")]))[0].cached is True


def test_duplicate_requests_in_one_call_are_sent_once():
    backend = ScriptedBackend(["only"])
    results = run(LLMClient(backend).complete([ask("same"), ask("same")]))
    assert len(backend.requests) == 1 and [result.text for result in results] == ["only", "only"]


def test_failures_are_returned_in_place_and_never_cached(tmp_path):
    cache = ResponseCache(tmp_path / "llm.sqlite")
    failing = ScriptedBackend([LLMFailure(reason="http_500", detail="boom"), "fine"])
    results = run(LLMClient(failing, cache).complete([ask("a"), ask("b")]))
    assert isinstance(results[0], LLMFailure) and results[0].reason == "http_500"
    assert results[1].text == "fine"
    retried = run(LLMClient(ScriptedBackend(["recovered"]), cache).complete([ask("a")]))
    assert retried[0].text == "recovered" and retried[0].cached is False


def _write_answers(path, start):
    cache = ResponseCache(path)
    client = LLMClient(ScriptedBackend(default=lambda request: request.messages[0]["content"].upper()), cache)
    asyncio.run(client.complete([ask(f"question {index}") for index in range(start, start + 200)]))


def test_several_processes_can_write_the_cache_at_once(tmp_path):
    path = tmp_path / "llm.sqlite"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_write_answers, args=(path, start)) for start in (0, 100, 200)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
        assert worker.exitcode == 0
    cache = ResponseCache(path)
    assert len(cache) == 400
    backend = ScriptedBackend(["unused"])
    results = run(LLMClient(backend, cache).complete([ask(f"question {index}") for index in range(400)]))
    assert all(result.cached for result in results) and backend.requests == []
    assert results[399].text == "QUESTION 399"


def test_budget_stops_before_it_is_exceeded():
    ledger = Ledger(budget=Budget(max_tokens=60))
    backend = ScriptedBackend(default="word " * 10)
    client = LLMClient(backend, ledger=ledger)
    first = run(client.complete([ask("short", sampling=SamplingParams(max_tokens=20))]))
    assert first[0].text and not ledger.exhausted
    refused = run(client.complete([ask("x " * 100, sampling=SamplingParams(max_tokens=20))]))
    assert isinstance(refused[0], LLMFailure) and refused[0].reason == "budget_exceeded"
    assert ledger.exhausted and len(backend.requests) == 1
    assert ledger.spent_tokens() <= 60


def test_cost_estimate_uses_configured_prices():
    ledger = Ledger(prices={"fake:fake": Price(input_per_mtok=1_000_000, output_per_mtok=2_000_000)})
    run(LLMClient(ScriptedBackend(["a b"]), ledger=ledger).complete([ask("one two three")]))
    assert ledger.summary()["estimated_cost_usd"] == pytest.approx(3 * 1 + 2 * 2)


class Answer(BaseModel):
    question: str
    hops: int


def test_structured_output_retries_with_the_error_and_keeps_raw_text():
    backend = ScriptedBackend(["not json", '{"question": "q?"}', '{"question": "q?", "hops": 2}'])
    results = run(complete_structured(LLMClient(backend), [ask("make one")], Answer, max_retries=2))
    assert isinstance(results[0], Structured) and results[0].value == Answer(question="q?", hops=2)
    assert results[0].attempts == 3
    assert backend.requests[0].json_schema == Answer.model_json_schema()
    feedback = backend.requests[2].messages[-1]["content"]
    assert "hops" in feedback and "Field required" in feedback


def test_structured_output_final_failure_is_recorded_not_none():
    backend = ScriptedBackend(["nope", "still nope"])
    results = run(complete_structured(LLMClient(backend), [ask("make one")], Answer, max_retries=1))
    failure = results[0]
    assert isinstance(failure, StructuredFailure) and failure.reason == "invalid_json"
    assert failure.raws == ["nope", "still nope"] and failure.attempts == 2


def test_dry_run_replies_fit_the_schema():
    reply = dry_run_reply(ask("x", json_schema=Answer.model_json_schema()))
    assert Answer.model_validate_json(reply)


def test_fake_can_script_tool_calls_and_failures():
    call = ToolCall(id="call_0", function=FunctionCall(name="search", arguments=json.dumps({"query": "x"})))
    backend = ScriptedBackend([Completion(tool_calls=[call], finish_reason="tool_calls")])
    result = run(LLMClient(backend).complete([ask("find x")]))[0]
    assert result.completions[0].tool_calls[0].function.name == "search"


class SlowScripted(ScriptedBackend):
    """Answers after 50 ms: long enough for a second caller to ask while the first is out."""

    async def complete(self, requests):
        await asyncio.sleep(0.05)
        return await super().complete(requests)


def test_a_request_already_on_its_way_is_not_sent_again():
    """Two callers asking the same thing at once (two agents in one state) share one request: the
    second is answered with the first's answer, counted as a cache hit, and nothing is paid twice."""

    backend = SlowScripted(["only", "second"])
    client = LLMClient(backend)

    async def both():
        return await asyncio.gather(client.complete([ask("same")]), client.complete([ask("same")]))

    (first,), (second,) = run(both())
    assert len(backend.requests) == 1 and first.text == second.text == "only"
    assert (first.cached, second.cached) == (False, True)
    summary = client.ledger.summary()
    assert (summary["llm_requests"], summary["llm_cache_hits"]) == (2, 1)


def test_a_twin_whose_caller_gave_up_is_sent_by_the_one_still_waiting():
    backend = SlowScripted(["first", "second"])
    client = LLMClient(backend)

    async def one_gives_up():
        leaving = asyncio.ensure_future(client.complete([ask("same")]))
        staying = asyncio.ensure_future(client.complete([ask("same")]))
        await asyncio.sleep(0.01)
        leaving.cancel()
        return await staying

    (answer,) = run(one_gives_up())
    assert answer.text in ("first", "second") and not answer.cached

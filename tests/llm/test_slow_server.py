"""A hang is not an overload (issue 37 item 5): a server that leaves each request's first try
unanswered keeps the client's concurrency (no limiter cut, no open circuit), a hung attempt gives
its slot to the next request once it is overdue, and every request is answered on its retry.
The timing figures are in benchmarks/bench_slow_server.py."""

import asyncio

from fault_server import FaultServer  # tests/llm is on sys.path

from synth.llm.openai_http import OpenAICompatibleBackend
from synth.llm.reasoning import OFF
from synth.llm.types import ChatRequest, SamplingParams


def test_hangs_keep_the_concurrency_and_every_request_is_answered():
    server = FaultServer(latency_s=0.05, always="timeout", fail_first=1, hang_s=30).start_in_thread()
    try:
        backend = OpenAICompatibleBackend("m", [server.url], max_concurrency=2, timeout_s=1.5, reasoning=OFF)
        requests = [
            ChatRequest(messages=[{"role": "user", "content": f"q{index}"}], sampling=SamplingParams(max_tokens=4))
            for index in range(6)
        ]

        async def run():
            results = await backend.complete(requests)
            await backend.aclose()
            return results

        results = asyncio.run(run())
    finally:
        server.stop()
    assert all(hasattr(result, "completions") for result in results)
    assert backend.limiter.limit == 2 and backend.limiter.cuts == 0  # a hang cut nothing
    assert backend.breaker.opened_at is None and 1 <= backend.retries["timeout"] <= 6  # later ones are hedged
    # overdue attempts gave their slot to the next request: more than 2 were in flight at once
    assert server.max_in_flight > 2


def test_hung_attempts_are_hedged_instead_of_waiting_out_the_timeout():
    """Every request hangs on its first two tries (issue 48 item 6). Only the first wave's first
    attempts wait out the timeout (no answer has said yet how long answers take); every later
    attempt is hedged once overdue, and its twin (marked as a hedge) is answered."""
    server = FaultServer(latency_s=0.05, always="timeout", fail_first=2, hang_s=60).start_in_thread()
    chains, turns = 4, 6
    try:
        backend = OpenAICompatibleBackend("m", [server.url], max_concurrency=8, timeout_s=3, reasoning=OFF)

        async def chain(index: int) -> list:
            answers = []
            for turn in range(turns):  # an agent's turns: each waits for the one before
                request = ChatRequest(
                    messages=[{"role": "user", "content": f"chain {index} turn {turn}"}],
                    sampling=SamplingParams(max_tokens=4),
                )
                answers += await backend.complete([request])
            return answers

        async def run():
            results = await asyncio.gather(*(chain(index) for index in range(chains)))
            await backend.aclose()
            return [answer for answers in results for answer in answers]

        results = asyncio.run(run())
    finally:
        server.stop()
    assert all(hasattr(result, "completions") for result in results)
    assert backend.retries["timeout"] == chains  # without hedging: 2 per request, 48 in all
    assert backend.retries["hedge"] == sum(server.hedges.values()) >= 2 * chains * (turns - 1)
    assert backend.hedging.won >= chains * (turns - 1) and backend.breaker.opened_at is None


def test_the_hedge_delay_learns_whether_overdue_means_hung():
    from synth.llm.hedging import COLD_FRACTION, MAX_MULTIPLE, MIN_MULTIPLE, MIN_SAMPLES, HedgePolicy

    policy = HedgePolicy()
    assert policy.after_s(timeout_s=8.0) is None  # nothing known: no hedge
    policy.hung()
    assert policy.after_s(timeout_s=8.0) == COLD_FRACTION * 8.0  # a hang seen: hedge early until answers come
    for latency in [1.0] * (MIN_SAMPLES - 1) + [2.0]:
        policy.answered(latency)
    usual = policy.after_s()
    assert usual is not None and usual > 2.0  # a multiple of the 90th percentile
    for _ in range(20):
        policy.outcome(winner=0, hedges=1)  # the first attempt answered anyway: the hedge was wasted
    assert policy.multiple == MAX_MULTIPLE
    for _ in range(20):
        policy.outcome(winner=2, hedges=2)  # the twins answered: the first attempts were hung
    assert policy.multiple == MIN_MULTIPLE and policy.won == 20
    disabled = HedgePolicy(enabled=False)
    disabled.hung()
    assert disabled.after_s(timeout_s=8.0) is None

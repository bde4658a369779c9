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
    assert backend.breaker.opened_at is None and backend.retries == {"timeout": 6}
    # overdue attempts gave their slot to the next request: more than 2 were in flight at once
    assert server.max_in_flight > 2

"""What caching every answer the moment it arrives costs, against the HTTP client's own cost.

    python benchmarks/bench_cache.py [--requests 10000] [--http-requests 2000]

Sends `--requests` distinct requests through LLMClient on the scripted backend three ways: no
cache, the per-answer cache (one SQLite transaction per answer, what synth does), and one
`put_many` per 32 answers (the chunked writes it replaced, which lost up to a chunk of answers to
a kill). The per-answer overhead is compared with the CPU time the HTTP client spends per request
against a loopback server (tests/llm/fault_server.py, its own process): that is the cost a real
run pays anyway. Also a rerun through the warm cache (every request a hit).
"""

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _measure import peak_rss_mib  # noqa: E402
from bench_http_backend import start_server  # noqa: E402

from synth.llm.cache import ResponseCache, cache_key  # noqa: E402
from synth.llm.client import LLMClient  # noqa: E402
from synth.llm.fake import ScriptedBackend  # noqa: E402
from synth.llm.openai_http import OpenAICompatibleBackend  # noqa: E402
from synth.llm.types import ChatRequest  # noqa: E402


def requests(count: int, tag: str) -> list[ChatRequest]:
    return [
        ChatRequest(messages=[{"role": "user", "content": f"{tag} question number {index}"}]) for index in range(count)
    ]


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def through_client(batch: list[ChatRequest], cache: ResponseCache | None) -> float:
    client = LLMClient(ScriptedBackend(default="an answer"), cache=cache)
    started = time.perf_counter()
    asyncio.run(client.complete(batch))
    return time.perf_counter() - started


def chunked_writes(batch: list[ChatRequest], cache: ResponseCache) -> float:
    """The replaced design: answers gathered, then stored 32 at a time."""
    backend = ScriptedBackend(default="an answer")
    started = time.perf_counter()
    answers = asyncio.run(backend.complete(batch))
    entries = [(cache_key(request, backend.model_id), request.stage, answer) for request, answer in zip(batch, answers)]
    for start in range(0, len(entries), 32):
        cache.put_many(entries[start : start + 32])
    return time.perf_counter() - started


def http_cpu_per_request(count: int) -> float:
    process, url = start_server(0.0)
    try:
        backend = OpenAICompatibleBackend("smol", [url], max_concurrency=64)

        async def send() -> None:
            await backend.complete(requests(count, "http"))
            await backend.aclose()

        before = cpu()
        asyncio.run(send())
        return (cpu() - before) / count
    finally:
        process.terminate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    parser.add_argument("--http-requests", type=int, default=2_000)
    arguments = parser.parse_args()
    count = arguments.requests
    with tempfile.TemporaryDirectory() as folder:
        bare = through_client(requests(count, "bare"), None)
        cache = ResponseCache(Path(folder) / "llm.sqlite")
        per_answer = through_client(requests(count, "cached"), cache)
        hits = through_client(requests(count, "cached"), cache)
        chunked = chunked_writes(requests(count, "chunked"), ResponseCache(Path(folder) / "chunked.sqlite"))
        stored = len(cache)
    http = http_cpu_per_request(arguments.http_requests)
    overhead = (per_answer - bare) / count
    print(f"{count} distinct requests through LLMClient on the scripted backend")
    print(f"  no cache:                 {bare:7.2f} s  ({bare / count * 1e6:6.0f} us/request)")
    print(
        f"  per-answer cache writes:  {per_answer:7.2f} s  ({per_answer / count * 1e6:6.0f} us/request; {stored} "
        "stored)"
    )
    print(f"  rerun, all cache hits:    {hits:7.2f} s  ({hits / count * 1e6:6.0f} us/request)")
    print(f"  chunked writes (old, 32): {chunked:7.2f} s  (backend + writes only)")
    print(f"per-answer caching overhead: {overhead * 1e6:.0f} us/request")
    print(f"HTTP client CPU per request (loopback, {arguments.http_requests} requests): {http * 1e6:.0f} us")
    print(f"overhead / HTTP client cost: {overhead / http:.2f}")
    print(f"peak memory: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()

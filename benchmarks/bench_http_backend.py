"""HTTP backend throughput against a fixed-latency OpenAI-compatible server on loopback.

    python benchmarks/bench_http_backend.py [--latency 0.1] [--rounds 50] [--concurrency 1 16 64 256]

The server (tests/llm/fault_server.py, in its own process) answers every request after exactly
`--latency` seconds, so with c requests in flight the ideal rate is c / latency. Each level sends
`rounds * c` requests (whole rounds, so a half-empty last round does not bias the ratio). The figure that
matters is the ratio of measured to ideal. The same requests sent by bare aiohttp (a semaphore,
no retries, no records) give the raw speed of this machine's client+server pair: the `vs raw`
column is what synth's client side (limiter, routing, retries, pydantic records) costs on top.
Also prints the client's CPU time per request and peak memory.

With `--reasoning-words N` (400 is a short thinker's turn) every level runs three times: answers
without reasoning, with N words in the `reasoning` field (vLLM's reasoning parser) and with them as
`<think>` text before the content (no reasoning parser), so the cost of reading the reasoning out
of each is the difference between the rows (the raw column reads the same bodies).
"""

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _measure import peak_rss_mib  # noqa: E402

from synth.llm.openai_http import OpenAICompatibleBackend  # noqa: E402
from synth.llm.reasoning import OFF  # noqa: E402
from synth.llm.types import ChatRequest, SamplingParams  # noqa: E402


def start_server(latency: float, reasoning_words: int = 0, style: str = "field") -> tuple[subprocess.Popen, str]:
    command = [sys.executable, str(ROOT / "tests" / "llm" / "fault_server.py"), "--latency", str(latency)]
    if reasoning_words:
        command += ["--reasoning-words", str(reasoning_words), "--reasoning-style", style]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    port = int(process.stdout.readline())
    return process, f"http://127.0.0.1:{port}/v1"


async def measure(url: str, concurrency: int, count: int) -> tuple[float, float, int]:
    """(wall seconds, client CPU seconds, failures) for `count` requests at `concurrency` in flight."""
    backend = OpenAICompatibleBackend("bench", [url], max_concurrency=concurrency, timeout_s=30, reasoning=OFF)
    requests = [
        ChatRequest(
            messages=[{"role": "user", "content": f"benchmark question number {index}"}],
            sampling=SamplingParams(max_tokens=16),
        )
        for index in range(count)
    ]
    await backend.complete(requests[: min(concurrency, count)])  # open the connections first
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    results = await backend.complete(requests)
    wall = time.perf_counter() - started
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    await backend.aclose()
    cpu = (cpu_after.ru_utime - cpu_before.ru_utime) + (cpu_after.ru_stime - cpu_before.ru_stime)
    failures = sum(1 for result in results if not hasattr(result, "completions"))
    return wall, cpu, failures


async def measure_raw(url: str, concurrency: int, count: int) -> float:
    """Wall seconds for bare aiohttp to send the same requests at the same concurrency."""
    import aiohttp

    gate = asyncio.Semaphore(concurrency)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(index: int) -> dict:
            payload = {
                "model": "bench",
                "messages": [{"role": "user", "content": f"benchmark question number {index}"}],
                "max_tokens": 16,
            }
            async with gate, session.post(f"{url}/chat/completions", json=payload) as reply:
                return json.loads(await reply.read())

        await asyncio.gather(*(one(index) for index in range(min(concurrency, count))))
        started = time.perf_counter()
        await asyncio.gather(*(one(index) for index in range(count)))
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.1, help="server latency per request, seconds")
    parser.add_argument("--rounds", type=int, default=50, help="requests per level = rounds x concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 16, 64, 256])
    parser.add_argument(
        "--reasoning-words", type=int, default=0, help="also run with this much reasoning in every answer"
    )
    arguments = parser.parse_args()
    answers = [("plain", 0, "field")]
    if arguments.reasoning_words:
        answers += [("reasoning", arguments.reasoning_words, "field"), ("<think>", arguments.reasoning_words, "inline")]
    print(f"fixed-latency server: {arguments.latency * 1000:.0f} ms per request")
    print(
        f"{'answers':>9} {'concurrency':>11} {'requests':>8} {'req/s':>9} {'ideal':>9} {'ratio':>6} {'raw req/s':>9} "
        f"{'vs raw':>6} {'cpu ms/req':>10} {'failed':>6}"
    )
    for concurrency in arguments.concurrency:
        for name, words, style in answers:
            process, url = start_server(arguments.latency, words, style)
            try:
                count = arguments.rounds * concurrency
                wall, cpu, failures = asyncio.run(measure(url, concurrency, count))
                raw = count / asyncio.run(measure_raw(url, concurrency, count))
            finally:
                process.terminate()
                process.wait()
            rate, ideal = count / wall, concurrency / arguments.latency
            print(
                f"{name:>9} {concurrency:>11} {count:>8} {rate:>9.1f} {ideal:>9.1f} {rate / ideal:>6.2f} {raw:>9.1f} "
                f"{rate / raw:>6.2f} {cpu / count * 1000:>10.2f} {failures:>6}"
            )
    print(f"peak memory of the client: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()

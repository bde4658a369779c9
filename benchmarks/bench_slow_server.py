"""A server that hangs: the run against it next to the healthy run (issue 37 item 5).

    python benchmarks/bench_slow_server.py [--requests 81] [--latency 1.0] [--timeout 6] [--concurrency 16]

The fault server (tests/llm/fault_server.py, its own process) answers after `--latency` seconds;
in the hang run every distinct request gets no reply on its first two tries (the client's
`--timeout` cuts each), then an answer. A hang is not an overload: the limiter should keep its
concurrency and retry the timed-out requests beside the others, so the hang run costs about two
timeouts more than the healthy one. Prints both wall times, their ratio, how many requests were
sent and the limiter's lowest and final concurrency.
"""

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from synth.llm.openai_http import OpenAICompatibleBackend  # noqa: E402
from synth.llm.reasoning import OFF  # noqa: E402
from synth.llm.types import ChatRequest, SamplingParams  # noqa: E402


def start_server(latency: float, hang: bool, hang_s: float) -> tuple[subprocess.Popen, str]:
    command = [sys.executable, str(ROOT / "tests" / "llm" / "fault_server.py"), "--latency", str(latency)]
    if hang:
        command += ["--always", "timeout", "--fail-first", "2", "--hang", str(hang_s)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    return process, f"http://127.0.0.1:{int(process.stdout.readline())}/v1"


async def run(url: str, requests: int, concurrency: int, timeout_s: float) -> dict:
    backend = OpenAICompatibleBackend(
        "bench", [url], max_concurrency=concurrency, timeout_s=timeout_s, max_attempts=6, reasoning=OFF
    )
    batch = [
        ChatRequest(
            messages=[{"role": "user", "content": f"slow server question {index}"}],
            sampling=SamplingParams(max_tokens=16),
        )
        for index in range(requests)
    ]
    lowest = [backend.limiter.limit]

    async def watch() -> None:
        while True:
            lowest[0] = min(lowest[0], backend.limiter.limit)
            await asyncio.sleep(0.05)

    watcher = asyncio.create_task(watch())
    started = time.perf_counter()
    results = await backend.complete(batch)
    wall = time.perf_counter() - started
    watcher.cancel()
    await backend.aclose()
    return {
        "wall_s": wall,
        "failed": sum(1 for result in results if not hasattr(result, "completions")),
        "sent": backend.sent,
        "lowest_limit": int(lowest[0]),
        "final_limit": int(backend.limiter.limit),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=81)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=6.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    rows = {}
    for name, hang in (("healthy", False), ("hangs twice", True)):
        server, url = start_server(args.latency, hang, hang_s=args.timeout * 5)
        try:
            rows[name] = asyncio.run(run(url, args.requests, args.concurrency, args.timeout))
        finally:
            server.terminate()
            server.wait()
    print(
        f"{args.requests} requests, {args.concurrency} in flight, server latency {args.latency:g} s, "
        f"client timeout {args.timeout:g} s"
    )
    print(f"{'run':<12} {'wall s':>8} {'failed':>7} {'sent':>6} {'lowest limit':>13} {'final limit':>12}")
    for name, row in rows.items():
        print(
            f"{name:<12} {row['wall_s']:>8.1f} {row['failed']:>7} {row['sent']:>6} {row['lowest_limit']:>13} "
            f"{row['final_limit']:>12}"
        )
    print(f"hang run / healthy run: {rows['hangs twice']['wall_s'] / rows['healthy']['wall_s']:.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()

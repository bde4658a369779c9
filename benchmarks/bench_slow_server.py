"""A server that hangs: the run against it next to the healthy run (issue 37 item 5, issue 48 item 6).

    python benchmarks/bench_slow_server.py [--requests 81] [--latency 1.0] [--timeout 6] [--concurrency 16]
    python benchmarks/bench_slow_server.py --run [--items 24] [--timeout 6]

`--run` times what a user waits for: a whole multihop run (construction, the solver panel, labels and
teacher distillation) through `synth generate`, streaming, every model role served by the
capacity-limited scripted server of bench_rollouts.py. Once healthy, once with every distinct request
unanswered on its first two tries (each try held for 5 timeouts, then dropped). An item's calls are
chained (each agent turn waits for the one before), so a hang costs the run what it costs one call
times the length of the chains, not what it costs independent requests. Prints both wall times, their
ratio, the target (3x the healthy run plus one timeout), the requests sent and how many hedges won.

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
        "trips": backend.breaker.trips,
        "retries": dict(backend.retries),
    }


def whole_runs(args) -> None:
    """The --run comparison: the same `synth generate` against a healthy and a hanging server."""
    import tempfile
    from types import SimpleNamespace

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _whole_run import _one_run, _prepare
    from bench_rollouts import start_server

    settings = SimpleNamespace(
        capacity=args.capacity,
        base_ms=args.base_ms,
        per_token_ms=args.per_token_ms,
        max_concurrency=None,
        seed=args.seed,
        distill_n=2,
        timeline=None,
        timeout=args.timeout,
    )
    rows = {}
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        template = folder / "template"
        _prepare(template)
        for name, hang_first in (("healthy", 0), ("hangs twice", 2)):
            server_folder = folder / name.replace(" ", "-")
            server_folder.mkdir()
            arguments = SimpleNamespace(**vars(settings), hang_first=hang_first, hang_s=5 * args.timeout)
            url, log, stop = start_server(server_folder, arguments)
            try:
                started = time.perf_counter()
                rows[name] = _one_run(template, server_folder, url, args.items, False, log, arguments)
                rows[name]["process"] = time.perf_counter() - started
            finally:
                stop()
            print(
                f"{name:<12} wall {rows[name]['wall']:.1f} s, {rows[name]['requests']} requests answered, "
                f"retries by reason {rows[name]['retries']}",
                flush=True,
            )
    healthy, hanging = rows["healthy"]["wall"], rows["hangs twice"]["wall"]
    target = 3 * healthy + args.timeout
    print(
        f"{args.items} items, multihop with panel and distillation, streaming; server {args.capacity} slots, "
        f"{args.base_ms:g} ms per request; client timeout {args.timeout:g} s"
    )
    print(f"healthy run {healthy:.1f} s, hanging run {hanging:.1f} s: {hanging / healthy:.2f}x")
    print(f"target: 3 x healthy + one timeout = {target:.1f} s -> {'met' if hanging <= target else 'missed'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=81)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=6.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--run", action="store_true", help="whole multihop runs through synth generate")
    parser.add_argument("--items", type=int, default=24, help="--run: items per run")
    parser.add_argument("--capacity", type=int, default=16, help="--run: server slots")
    parser.add_argument("--base-ms", type=float, default=150.0, help="--run: service time per request")
    parser.add_argument("--per-token-ms", type=float, default=1.0, help="--run: service time per token")
    parser.add_argument("--seed", type=int, default=0, help="--run: the run's --seed")
    args = parser.parse_args()
    if args.run:
        whole_runs(args)
        return
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
    print(f"{'run':<12} {'wall s':>8} {'failed':>7} {'sent':>6} {'lowest limit':>13} {'final limit':>12} circuit trips")
    for name, row in rows.items():
        print(
            f"{name:<12} {row['wall_s']:>8.1f} {row['failed']:>7} {row['sent']:>6} {row['lowest_limit']:>13} "
            f"{row['final_limit']:>12} {row['trips']:>5}  retries {row['retries']}"
        )
    print(f"hang run / healthy run: {rows['hangs twice']['wall_s'] / rows['healthy']['wall_s']:.2f}x (target <= 3x)")


if __name__ == "__main__":
    main()

"""Agent rollouts with long-tailed turn counts against a capacity-limited server: wall time vs ideal.

    python benchmarks/bench_rollouts.py [--rollouts 128] [--capacity 16] [--base-ms 20] [--seed 0]
    python benchmarks/bench_rollouts.py --simulate   # the scheduling model alone, many sizes
    python benchmarks/bench_rollouts.py --run [--items 512 2048]   # whole runs, staged vs streaming
    python benchmarks/bench_rollouts.py --run --flow   # the same as Prefect flows on 2 Dask workers

The server (a loopback OpenAI-compatible server, tests/llm/fault_server.py underneath) processes at
most `--capacity` requests at once, as a GPU's batch does; each takes `base + per-token x tokens`
(prompt words / 10 + completion words), and waits for a slot when all are busy. Replies script
each rollout's number of searches from a long-tailed distribution keyed by the rollout's seed:
most rollouts search 1-3 times, a few 20 times or more. Three workloads drive the real
`SearchAgent` over the HTTP backend, as synth's stages configure it: the solver panel (answering,
tags protocol, k=2 per question), distillation (answering, json protocol, 4 per question) and the
self-play proposer (proposing, json protocol, a required number of searches).

ideal = max(total service time / capacity, the longest rollout's own chain of service times),
with each request's service time as long as it held its slot (the server's timers overshoot a
little, which is not the client's doing): no schedule can beat it. `lockstep` replays the same
requests turn by turn (each turn a batch that waits for its slowest request, as the agent loop did
before rollouts became independent) in a simulation of the same server, for comparison. The last line reads
`agent_vs_ideal panel=<x> distill=<y> proposer=<z>` (wall over ideal, lower is better).

`--run` drives whole multihop runs (panel and distillation) through `synth generate` against the
same server, staged and streaming (benchmarks/_whole_run.py says how they are measured); its last
line reads `run_vs_ideal staged=<x> streaming=<y> busy=<z>` at the largest size (`run_vs_ideal flow
...` with `--flow`: the run as a Prefect flow, `synth flows run`, on a local Dask cluster of two
workers, a task per shard). A run's client
does real work per request (cache, ledger, searches) and construction shares its process, so
these runs default to a server whose turns take longer (150 ms base), as served models' do; the
rollout workloads keep 20 ms.
"""

import argparse
import asyncio
import hashlib
import heapq
import itertools
import json
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "llm"))

from fault_server import FaultServer  # noqa: E402

from synth.llm.client import LLMClient  # noqa: E402
from synth.llm.openai_http import OpenAICompatibleBackend  # noqa: E402
from synth.schemas import Document  # noqa: E402
from synth.search.agent import ANSWERING, SearchAgent  # noqa: E402
from synth.search.budget import AgentBudget  # noqa: E402
from synth.search.corpus import Corpus  # noqa: E402
from synth.search.retrieval import BM25Retriever  # noqa: E402
from synth.search.tools import SearchTools  # noqa: E402


def planned_searches(rollout_seed: int, salt: int) -> int:
    """Long-tailed: P(1) ~ 0.45, median 2, about 4% above 20 (a Pareto tail, capped at 40)."""
    digest = hashlib.sha256(f"{salt}:{rollout_seed}".encode()).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    return min(40, max(1, round(1.0 / (1.0 - u) ** 0.8)))


class CapacityServer(FaultServer):
    """At most `capacity` requests in service at once; scripted tool calls, then the final call.
    With `hang_first=N`, each distinct request's first N tries get no reply for `hang_s` seconds
    (a hung engine replica, a dropped connection behind a proxy); they hold no slot."""

    def __init__(
        self, capacity: int, base_s: float, per_token_s: float, salt: int, log: Path, hang_first=0, hang_s=60.0
    ):
        super().__init__()
        self.capacity, self.base_s, self.per_token_s, self.salt = capacity, base_s, per_token_s, salt
        self.hang_first, self.hang_s = hang_first, hang_s
        self.log = open(log, "a", buffering=1)  # one line per served request: rollout, turn, seconds in a slot
        self._slots: asyncio.Semaphore | None = None

    async def _respond(self, writer, headers, body) -> bool:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.capacity)
        key = hashlib.sha256(body).hexdigest()
        self.distinct[key] += 1
        if self.distinct[key] <= self.hang_first:
            await asyncio.sleep(self.hang_s)
            return False
        request = json.loads(body)
        rollout, turn = divmod(request.get("seed") or 0, 1000)
        content = self._reply(request, rollout, turn)
        prompt_words = sum(len(str(message.get("content") or "").split()) for message in request["messages"])
        service = self.base_s + self.per_token_s * (prompt_words / 10 + len(content.split()))
        async with self._slots:
            started = time.perf_counter()
            await asyncio.sleep(service)
            held = time.perf_counter() - started  # the event loop's timers overshoot by up to a millisecond
        self.log.write(f"{rollout} {turn} {held} {time.time()}\n")  # the last: when it left its slot
        reply = {
            "id": "x",
            "object": "chat.completion",
            "model": request["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt_words, "completion_tokens": len(content.split())},
        }
        self._send(writer, 200, json.dumps(reply))
        await writer.drain()
        return True

    def _reply(self, request: dict, rollout: int, turn: int) -> str:
        searching = turn < planned_searches(rollout, self.salt)
        query = f"subject {rollout % 7} detail {turn}"
        schema = request.get("response_format", {}).get("json_schema", {}).get("schema")
        if schema is None:  # tags protocol
            return (
                f'<tool_call>{{"name": "search", "arguments": {{"query": "{query}"}}}}'
                if searching
                else f"<answer>Topic {rollout % 50}</answer>"
            )
        allowed = [option["properties"]["name"]["const"] for option in schema["anyOf"]]
        final = (
            next(name for name in allowed if name not in ("search", "open"))
            if set(allowed) - {"search", "open"}
            else None
        )
        if (searching or final is None) and "search" in allowed:
            return json.dumps({"name": "search", "arguments": {"query": query}})
        argument = "answer" if final == "answer" else "question"
        return json.dumps({"name": final, "arguments": {argument: f"Which topic is about subject {rollout % 7}?"}})


def lockstep_seconds(chains: list[list[float]], capacity: int) -> float:
    """Each turn a batch of every unfinished rollout's request, on `capacity` slots, waiting for the slowest."""
    total, turn = 0.0, 0
    while True:
        batch = [chain[turn] for chain in chains if len(chain) > turn]
        if not batch:
            return total
        slots = [0.0] * capacity
        for service in batch:
            start = heapq.heappop(slots)
            heapq.heappush(slots, start + service)
        total += max(slots)
        turn += 1


ORDERS = ("arrival", "depth", "clairvoyant")


def independent_seconds(chains: list[list[float]], capacity: int, order_by: str = "arrival") -> float:
    """Independent rollouts on `capacity` slots with no client costs: a rollout's next turn is ready
    the moment its last one is served, and a free slot takes the earliest ready turn ("arrival", the
    limiter's order: what the agent could reach), the deepest ("depth"), or the one whose rollout
    has the most work left ("clairvoyant": needs every rollout's length in advance, which no agent
    has; it shows how much of the gap to the ideal is the price of not knowing)."""

    def key(rollout: int, turn: int) -> float:
        return {"arrival": 0, "depth": -turn, "clairvoyant": -sum(chains[rollout][turn:])}[order_by]

    order = itertools.count()
    ready = [(key(index, 0), next(order), index) for index in range(len(chains))]  # (key, arrival, rollout)
    heapq.heapify(ready)  # "clairvoyant" keys differ from the first turn on
    turns = [0] * len(chains)
    running: list[tuple[float, int]] = []  # (finish time, rollout)
    now = 0.0
    while ready or running:
        while ready and len(running) < capacity:
            _, _, rollout = heapq.heappop(ready)
            heapq.heappush(running, (now + chains[rollout][turns[rollout]], rollout))
        now, rollout = heapq.heappop(running)
        turns[rollout] += 1
        if turns[rollout] < len(chains[rollout]):
            heapq.heappush(ready, (key(rollout, turns[rollout]), next(order), rollout))
    return now


def simulate_orders(base_s: float, per_token_s: float, salt: int) -> None:
    """The scheduling model alone, over many sizes: which order a client should give free slots.

    Chains follow the distillation workload as the server logs it at the default settings (15 tokens
    at the first turn, 5.5 more per turn as results pile up); no server, no agent, no client costs.
    """
    print("rollouts on slots: wall over ideal in arrival order / deepest turn first / knowing every length")
    for capacity in (16, 64):
        for rollouts in (64, 128, 512, 2048, 8192):
            chains = [
                [base_s + per_token_s * (15 + 5.5 * turn) for turn in range(planned_searches(seed, salt) + 1)]
                for seed in range(rollouts)
            ]
            ideal = max(sum(map(sum, chains)) / capacity, max(map(sum, chains)))
            ratios = [independent_seconds(chains, capacity, order) / ideal for order in ORDERS]
            print(f"{rollouts:5d} on {capacity:2d}: " + " / ".join(f"{ratio:.2f}x" for ratio in ratios))


async def lockstep_run(agent: SearchAgent, questions: list[tuple[str, int]]) -> None:
    """The agent loop as it was before rollouts became independent: every unfinished rollout's
    next turn in one batch, the next batch only when the whole batch is answered (same requests)."""
    from synth.schemas import ChatMessage
    from synth.search.agent import Rollout

    task = agent.task
    system = {"native": task.native_system, "json": task.json_system}.get(agent.protocol, task.tags_system)(
        agent.contract
    )
    rollouts = [
        Rollout(
            question,
            seed,
            [
                ChatMessage(role="system", content=system),
                ChatMessage(role="user", content=f"{task.prompt_prefix}{question}"),
            ],
        )
        for question, seed in questions
    ]
    for turn in range(agent.max_turns):
        active = [rollout for rollout in rollouts if not rollout.done]
        if not active:
            break
        for rollout, result in zip(
            active, await agent.client.complete([agent._request(rollout, turn) for rollout in active])
        ):
            agent._advance(rollout, result)
        await asyncio.gather(*(agent.run_pending(rollout) for rollout in active))


def workloads(
    tools: SearchTools, client: LLMClient, rollouts: int
) -> dict[str, tuple[SearchAgent, list[tuple[str, int]]]]:
    from synth.search.proposing import PROPOSING

    def questions(count: int, per: int, offset: int) -> list[tuple[str, int]]:
        return [
            (f"Which topic is about subject {index % 7}?", offset + index * per + sample)
            for index in range(count)
            for sample in range(per)
        ]

    JSON_AGENT = AgentBudget(max_turns=48, turn_tokens=128, demonstrations=False, protocol="json")  # noqa: N806
    return {
        "panel": (
            SearchAgent(
                client,
                tools,
                AgentBudget(max_turns=48, turn_tokens=64, demonstrations=False, protocol="tags"),
                stage="solver_search",
            ),
            questions(rollouts // 2, 2, 10_000),
        ),
        "distill": (
            SearchAgent(client, tools, JSON_AGENT, stage="distill", task=ANSWERING),
            questions(rollouts // 4, 4, 20_000),
        ),
        "proposer": (
            SearchAgent(
                client,
                tools,
                JSON_AGENT,
                stage="propose",
                task=PROPOSING,
                required_calls=1,
            ),
            questions(rollouts, 1, 30_000),
        ),
    }


def serve(
    port_file: Path, log: Path, capacity: int, base_s: float, per_token_s: float, salt: int, hang_first=0, hang_s=60.0
) -> None:
    """The server's own process (so its CPU does not slow the agent's event loop, nor the reverse)."""

    async def run() -> None:
        server = CapacityServer(capacity, base_s, per_token_s, salt, log, hang_first, hang_s)
        await server.start()
        port_file.write_text(str(server.port))
        await asyncio.Event().wait()

    try:
        import uvloop

        uvloop.run(run())
    except ImportError:
        asyncio.run(run())


def read_chains(log: Path) -> list[list[float]]:
    """Per rollout, the service seconds of its turns in order (what the server logged)."""
    turns: dict[int, dict[int, float]] = defaultdict(dict)
    for line in log.read_text().splitlines():
        rollout, turn, seconds = line.split()[:3]
        turns[int(rollout)][int(turn)] = float(seconds)
    return [[by_turn[turn] for turn in sorted(by_turn)] for by_turn in turns.values()]


def start_server(folder: Path, arguments) -> tuple[str, Path, "Callable[[], None]"]:
    """The capacity server in its own process: its URL, its log of served requests, and how to stop it."""
    import subprocess

    port_file, log = folder / "port", folder / "served.log"
    process = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            str(port_file),
            str(log),
            "--capacity",
            str(arguments.capacity),
            "--base-ms",
            str(arguments.base_ms),
            "--per-token-ms",
            str(arguments.per_token_ms),
            "--seed",
            str(arguments.seed),
            "--hang-first",
            str(getattr(arguments, "hang_first", 0)),
            "--hang-s",
            str(getattr(arguments, "hang_s", 60.0)),
        ]
    )
    deadline = time.monotonic() + 30
    while not port_file.exists() or not port_file.read_text():
        assert time.monotonic() < deadline and process.poll() is None, "the benchmark server did not start"
        time.sleep(0.05)
    return f"http://127.0.0.1:{port_file.read_text()}/v1", log, process.terminate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rollouts", type=int, default=128)
    parser.add_argument("--capacity", type=int, help="server slots (default 16)")
    parser.add_argument("--base-ms", type=float, help="per-request service time (default 20; 150 with --run)")
    parser.add_argument("--per-token-ms", type=float, help="per-token service time (default 0.5; 1 with --run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-concurrency",
        type=int,
        help="The HTTP backend's limit (default: the server's capacity, as a "
        "model's max_concurrency set to the server's batch size).",
    )
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="only the scheduling model, over 64 to 8,192 rollouts on 16 and 64 slots",
    )
    parser.add_argument(
        "--run", action="store_true", help="whole multihop runs through `synth generate`, staged vs streaming"
    )
    parser.add_argument(
        "--flow", action="store_true", help="--run: as Prefect flows on a 2-worker local Dask cluster (synth flows run)"
    )
    parser.add_argument("--items", type=int, nargs="+", default=[512, 2048], help="--run: items per run")
    parser.add_argument("--distill-n", type=int, default=2, help="--run: teacher rollouts per item")
    parser.add_argument(
        "--threads", type=int, default=4, help="--flow: shard tasks each Dask worker holds at once (flows.yaml threads)"
    )
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=["staged", "streaming"],
        default=["staged", "streaming"],
        help="--run: which schedules to run (busy is the last one's)",
    )
    parser.add_argument("--timeline", help="--run: copy each run's server log (one line per request) here")
    parser.add_argument("--serve", nargs=2, metavar=("PORT_FILE", "LOG"), help=argparse.SUPPRESS)
    parser.add_argument("--hang-first", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--hang-s", type=float, default=60.0, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    for name, default, run_default in (("capacity", 16, 16), ("base_ms", 20.0, 150.0), ("per_token_ms", 0.5, 1.0)):
        if getattr(arguments, name) is None:
            setattr(arguments, name, run_default if arguments.run else default)
    base_s, per_token_s = arguments.base_ms / 1000, arguments.per_token_ms / 1000
    if arguments.serve:
        serve(
            Path(arguments.serve[0]),
            Path(arguments.serve[1]),
            arguments.capacity,
            base_s,
            per_token_s,
            arguments.seed,
            arguments.hang_first,
            arguments.hang_s,
        )
        return
    if arguments.simulate:
        simulate_orders(base_s, per_token_s, arguments.seed)
        return
    if arguments.run:
        from _whole_run import compare

        compare(arguments, lambda folder: start_server(folder, arguments))
        return

    import tempfile

    documents = [
        Document(
            id=f"d{index}",
            title=f"Topic {index}",
            text=f"Topic {index} is about subject {index % 7} and detail {index % 11}.",
        )
        for index in range(200)
    ]
    corpus = Corpus(documents, name="bench")
    ratios = {}
    with tempfile.TemporaryDirectory() as folder:
        url, log, stop = start_server(Path(folder), arguments)
        try:
            tools = SearchTools(
                corpus, BM25Retriever(corpus, Path(folder) / "index", log=lambda line: None), default_k=3
            )
            backend = OpenAICompatibleBackend(
                "bench", [url], max_concurrency=arguments.max_concurrency or arguments.capacity, timeout_s=600
            )
            client = LLMClient(backend)
            for name, (agent, questions) in workloads(tools, client, arguments.rollouts).items():
                log.write_text("")

                started = time.perf_counter()
                rollouts = asyncio.run(agent.run(questions))
                wall = time.perf_counter() - started
                chains = read_chains(log)
                total = sum(sum(chain) for chain in chains)
                ideal = max(total / arguments.capacity, max(sum(chain) for chain in chains))
                simulated = lockstep_seconds(chains, arguments.capacity)
                reachable = independent_seconds(chains, arguments.capacity)
                deepest = independent_seconds(chains, arguments.capacity, "depth")
                clairvoyant = independent_seconds(chains, arguments.capacity, "clairvoyant")
                log.write_text("")
                agent.stage += "-lockstep"  # not the cache (there is none here): just another accounting label
                started = time.perf_counter()
                asyncio.run(lockstep_run(agent, questions))
                lockstep = time.perf_counter() - started
                lengths = sorted(len(chain) for chain in chains)
                ratios[name] = wall / ideal
                print(
                    f"{name:9s} {len(rollouts)} rollouts, {sum(lengths)} requests, turns median "
                    f"{lengths[len(lengths) // 2]} "
                    f"max {lengths[-1]}; ideal {ideal:.2f} s; independent rollouts {wall:.2f} s "
                    f"({wall / ideal:.2f}x ideal; "
                    f"simulated without client costs {reachable / ideal:.2f}x, deepest turn first "
                    f"{deepest / ideal:.2f}x, "
                    f"knowing every length {clairvoyant / ideal:.2f}x); "
                    f"lock-step {lockstep:.2f} s ({lockstep / ideal:.2f}x; simulated without client costs "
                    f"{simulated / ideal:.2f}x)"
                )
        finally:
            stop()
    print("agent_vs_ideal " + " ".join(f"{name}={ratio:.2f}" for name, ratio in ratios.items()))


if __name__ == "__main__":
    main()

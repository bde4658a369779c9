"""Distillation throughput: teacher rollouts per minute and tokens/s, against the raw backend on the
same prompts.

    python benchmarks/bench_distill.py [--items 8] [--n 2] [--model embedded|fake] [--turns 4] [--guided]
        [--protocol json] [--served]

Builds multihop items from the bundled graph, then times (1) the teacher's rollouts through the
LLM client (empty cache, so every turn is paid; every rollout its own coroutine) plus rejection
sampling, and (2) the raw backend answering every request the teacher made, in one batch, with the
prefix cache emptied first (no response cache, no accounting, no waiting for earlier turns). The
ratio is what the agent's turn dependencies, tool calls and bookkeeping cost against the backend's
best case; the agent's prefix-cache hit rate is printed beside it.
`--model fake` measures synth's own overhead with a backend that costs nothing.

Then the checks beyond the answer (synth.solving.trajectory_checks, with the bundled graph's entity
names) and the step labels: the kept share and the rejections by reason of the run, and of the path
teacher's demonstrations on the same items (multi-call runs over real results, what a competent
teacher's look like), and the CPU time reading them costs per 1,000 trajectories, against the CPU
that made them (the run's distillation; the path teacher's searches and bookkeeping alone, what a
served teacher's rollouts cost this process besides waiting): the acceptance bound is 5%.
`--served` makes the teacher a served one: the loopback competent server of the tests (vLLM's
response shape, reasoning and tool calls parsed, one search per hop, then an answer) in a process
of its own, so this process's CPU is the client's alone (HTTP, parsing, the agent, the cache).
"""

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib, scratch_settings  # noqa: E402
from bench_panel import make_items  # noqa: E402

from synth.generators.distill import DistillConfig, Teacher  # noqa: E402
from synth.generators.guidance import path_guidance  # noqa: E402
from synth.generators.path_teacher import PathTeacher  # noqa: E402
from synth.kg.name_mentions import WorldNames  # noqa: E402
from synth.kg.snapshot import load_snapshot  # noqa: E402
from synth.llm.base import LLMBackend  # noqa: E402
from synth.llm.cache import ResponseCache  # noqa: E402
from synth.llm.client import LLMClient  # noqa: E402
from synth.llm.models import ModelPool, ModelSpec  # noqa: E402
from synth.llm.types import ChatRequest, SamplingParams  # noqa: E402
from synth.run.flows_file import declared_models  # noqa: E402
from synth.search.corpus import Corpus  # noqa: E402
from synth.search.retrieval import BM25Retriever  # noqa: E402
from synth.search.tools import SearchTools  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.solving.rejection import distill_statistics, judge_rollouts, read_calls  # noqa: E402
from synth.solving.trajectory_reading import text_words  # noqa: E402


class Recording(LLMBackend):
    """Passes requests on and keeps them, so the raw run can replay exactly the same prompts."""

    def __init__(self, backend: LLMBackend):
        self.backend, self.requests = backend, []

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    def native_tool_calls(self) -> bool:
        return self.backend.native_tool_calls()

    async def complete(self, requests):
        self.requests += list(requests)
        return await self.backend.complete(requests)


def completion_tokens(results) -> int:
    return sum(result.usage.completion_tokens for result in results if hasattr(result, "usage"))


async def measure(arguments, settings: Settings) -> None:
    kg = load_snapshot()
    items = make_items(kg, arguments.items)
    corpus = Corpus.from_kg(kg)
    tools = SearchTools(
        corpus, BM25Retriever(corpus, settings.cache_dir / "search", log=lambda line: None), default_k=3
    )
    models = declared_models(None)
    server = None
    if arguments.served:  # a competent served teacher in a process of its own
        server, url = start_served_teacher(items)
        models = {**models, "served": ModelSpec(backend="openai", model="served", endpoints=[url], hedge=False)}
        arguments.model = "served"
    pool = ModelPool(settings, models, log=lambda line: print(line, file=sys.stderr))
    backend = pool.backend(arguments.model)
    recording = Recording(backend)
    client = LLMClient(recording, cache=ResponseCache(settings.llm_cache_path))
    config = DistillConfig(
        enabled=True,
        n=arguments.n,
        max_turns=arguments.turns,
        turn_tokens=arguments.turn_tokens,
        guided=arguments.guided,
        protocol=arguments.protocol,
    )
    teacher = Teacher(config, client, tools, guidance=lambda item: path_guidance(item, kg.name))
    await backend.complete(
        [ChatRequest(messages=[{"role": "user", "content": "Hello"}], sampling=SamplingParams(max_tokens=4))]
    )  # engine start-up

    names = WorldNames.of_graph(kg)
    started, cpu_started = time.perf_counter(), time.process_time()
    rollouts = await teacher.rollouts(items)
    judged = judge_rollouts(items, rollouts, config, 0.8, names=names)
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
    summary = client.ledger.summary()
    statistics = distill_statistics(judged, len(items), config)

    hit_rate = getattr(backend, "prefix_cache_hit_rate", None)
    if hasattr(backend, "reset_prefix_cache"):
        backend.reset_prefix_cache()  # the raw replay must not reuse the prefixes the agent run computed
    started = time.perf_counter()
    raw = await backend.complete(recording.requests)
    raw_seconds = time.perf_counter() - started
    print(
        f"model {backend.model_id}, protocol {teacher.protocol}, {len(items)} items x n={config.n}, "
        f"{len(recording.requests)} requests over {teacher.agent.max_turns} turns max"
    )
    print(
        f"distill          {len(rollouts) / seconds * 60:8.1f} rollouts/min  "
        f"{summary['completion_tokens'] / seconds:8.1f} completion tok/s  "
        f"{summary['prompt_tokens'] / seconds:8.1f} prompt tok/s  ({seconds:.1f} s)"
    )
    print(
        f"raw backend      {len(recording.requests) / raw_seconds:8.2f} req/s  "
        f"{completion_tokens(raw) / raw_seconds:8.1f} completion tok/s  ({raw_seconds:.1f} s, same requests in one "
        "batch)"
    )
    print(
        f"distill / raw    {raw_seconds / seconds:8.3f} (time ratio)"
        + (f"; agent prefix-cache hit rate {hit_rate:.2f} of prompt tokens" if hit_rate is not None else "")
    )
    print(
        f"accepted {statistics['accepted']}/{statistics['rollouts']}, items with a trajectory "
        f"{statistics['items_with_trajectory']}/{len(items)}, "
        f"rejected {statistics['rejected']}, tool calls per rollout {statistics['tool_calls_per_rollout']}"
    )
    print(f"findings {statistics['findings']}, step labels {statistics['step_labels']}")
    kept_share(judged, f"teacher {backend.model_id}")
    walk_started = time.process_time()
    walked = judge_rollouts(items, await PathTeacher(kg, tools).rollouts(items), config, 0.8, names=names)
    walking = (time.process_time() - walk_started) / max(1, len(walked)) * 1000
    kept_share(walked, "path teacher")
    for label, trajectories, own in (
        ("this run's rollouts", judged, cpu_seconds / max(1, len(rollouts)) * 1000),
        ("path teacher's", walked, walking),
    ):
        reading = reading_seconds(items, trajectories, config, names) / max(1, len(trajectories)) * 1000
        print(
            f"checks + step labels on {label}: {reading * 1000:.1f} ms CPU per 1,000 trajectories "
            f"({statistics_calls(trajectories):.1f} calls each) = {reading / own:.2%} of the CPU that made them "
            f"({own:.1f} s per 1,000)"
        )
    print(f"peak memory {peak_rss_mib():.0f} MiB")
    await pool.aclose()
    if server is not None:
        server.terminate()


def _serve(items, ports) -> None:
    """The child process: the tests' competent server, knowing the items, until terminated."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "llm"))
    from competent_server import CompetentServer

    server = CompetentServer("vllm", p={hops: 0.9 for hops in range(1, 10)})
    server.learn(items)

    async def main() -> None:
        await server.start(0)
        ports.put(server.port)
        await asyncio.Event().wait()

    asyncio.run(main())


def start_served_teacher(items):
    import multiprocessing

    ports = multiprocessing.Queue()
    process = multiprocessing.Process(target=_serve, args=(items, ports), daemon=True)
    process.start()
    return process, f"http://127.0.0.1:{ports.get(timeout=60)}/v1"


def kept_share(trajectories, label: str) -> None:
    reasons = Counter(t.reject_reason or "kept" for t in trajectories)
    shares = ", ".join(f"{reason} {count / len(trajectories):.0%}" for reason, count in reasons.most_common())
    print(f"{label}: {len(trajectories)} trajectories: {shares}")


def statistics_calls(trajectories) -> float:
    return sum(t.num_tool_calls for t in trajectories) / max(1, len(trajectories))


def reading_seconds(items, trajectories, config, names, repeats: int = 5) -> float:
    """CPU seconds to read every trajectory once (step labels, answer sighting, findings), best of `repeats`."""
    by_id = {item.id: item for item in items}
    best = float("inf")
    for _ in range(repeats):
        text_words.cache_clear()  # each trajectory is read once in a run: no text known beforehand
        started = time.process_time()
        for trajectory in trajectories:
            read_calls(trajectory, by_id[trajectory.item_id], bool(trajectory.correct), names, config)
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=8)
    parser.add_argument("--n", type=int, default=2, help="Rollouts per item.")
    parser.add_argument("--turns", type=int, default=4, help="Model turns per rollout.")
    parser.add_argument("--turn-tokens", type=int, default=128, help="Tokens per turn.")
    parser.add_argument("--model", default="embedded", help="A declared model: embedded (vLLM) or fake.")
    parser.add_argument(
        "--protocol", default="auto", choices=["auto", "native", "json", "tags"], help="How the teacher calls tools."
    )
    parser.add_argument(
        "--served", action="store_true", help="A competent served teacher on loopback, in its own process."
    )
    parser.add_argument(
        "--guided",
        action="store_true",
        help="Show the teacher the construction path (and check the runs for hint use).",
    )
    arguments = parser.parse_args()
    with scratch_settings() as settings:
        asyncio.run(measure(arguments, settings))


if __name__ == "__main__":
    main()

"""Solver panel throughput against the raw backend on the same prompts.

    python benchmarks/bench_panel.py [--items 16] [--model embedded|fake] [--k 2] [--gold]

Builds multihop items from the bundled graph, then times (1) the raw backend answering the
panel's closed-book requests (and gold-evidence ones with --gold: long prompts, slow on a CPU) directly (no cache, no
accounting), (2) the panel
making the same requests through the LLM client (cache empty, so every call is paid), and (3) the
panel's search agent (several turns per attempt, no raw counterpart). Prints items/s, completion
tokens/s and the panel/raw ratio. The raw run is repeated after the panel, so vLLM's prefix cache
favours neither side. `--model fake` measures synth's own overhead with a backend that costs nothing.
"""

import argparse
import asyncio
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib, scratch_settings  # noqa: E402

from synth.generators.base import Rejection  # noqa: E402
from synth.generators.multihop import MultihopGenerator  # noqa: E402
from synth.kg.snapshot import load_snapshot  # noqa: E402
from synth.llm.cache import ResponseCache  # noqa: E402
from synth.llm.client import LLMClient  # noqa: E402
from synth.llm.models import ModelPool  # noqa: E402
from synth.pipelines.multihop import Config  # noqa: E402
from synth.run.flows_file import declared_models  # noqa: E402
from synth.search.corpus import Corpus  # noqa: E402
from synth.search.retrieval import BM25Retriever  # noqa: E402
from synth.search.tools import SearchTools  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.solving.solvers import ModelSolver  # noqa: E402


def make_items(kg, count: int):
    config = Config()
    generator = MultihopGenerator(kg, config.walk, config.reverse, seed=0)
    items, rng = [], random.Random(0)
    while len(items) < count:
        candidate = generator.attempt(rng.choice([2, 3, 4]))
        if not isinstance(candidate, Rejection):
            items.append(candidate)
    return items


def tokens(results) -> int:
    return sum(result.usage.completion_tokens for result in results if hasattr(result, "usage"))


async def measure(arguments, settings: Settings) -> None:
    kg = load_snapshot()
    items = make_items(kg, arguments.items)
    corpus = Corpus.from_kg(kg)
    tools = SearchTools(corpus, BM25Retriever(corpus, settings.cache_dir / "search", log=lambda line: None))
    evidence = lambda item: [document for document in map(tools.open, item.evidence_doc_ids) if document]  # noqa: E731
    pool = ModelPool(settings, declared_models(None), log=lambda line: print(line, file=sys.stderr))
    backend = pool.backend(arguments.model)
    client = LLMClient(backend, cache=ResponseCache(settings.llm_cache_path))
    solver = ModelSolver("bench", client, tools, evidence, ("closed_book", "gold_evidence", "search"))
    conditions = ("closed_book", "gold_evidence") if arguments.gold else ("closed_book",)
    requests = [solver._request(item, condition, arguments.k) for condition in conditions for item in items]
    await backend.complete(requests[:2])  # start the engine outside the timings

    started = time.perf_counter()
    raw = await backend.complete(requests)
    raw_seconds, raw_tokens = time.perf_counter() - started, tokens(raw)
    started = time.perf_counter()
    for condition in conditions:
        await solver.solve(items, condition, arguments.k)
    panel_seconds = time.perf_counter() - started
    panel_tokens = client.ledger.summary()["completion_tokens"]
    started = time.perf_counter()
    raw_again = await backend.complete(requests)
    raw_again_seconds = time.perf_counter() - started
    started = time.perf_counter()
    await solver.solve(items, "search", arguments.k)
    search_seconds = time.perf_counter() - started
    search_tokens = client.ledger.summary()["completion_tokens"] - panel_tokens
    raw_best = min(raw_seconds, raw_again_seconds)
    print(
        f"model {backend.model_id}, {len(items)} items, k={arguments.k}, {len(requests)} requests "
        f"({' + '.join(conditions)})"
    )
    print(
        f"raw backend      {len(requests) / raw_seconds:8.2f} req/s  {raw_tokens / raw_seconds:8.1f} tok/s  "
        f"({raw_seconds:.1f} s; again {raw_again_seconds:.1f} s, {tokens(raw_again) / raw_again_seconds:.1f} tok/s)"
    )
    print(
        f"panel (client)   {len(requests) / panel_seconds:8.2f} req/s  {panel_tokens / panel_seconds:8.1f} tok/s  "
        f"({panel_seconds:.1f} s)"
    )
    print(f"panel / raw      {raw_best / panel_seconds:8.3f} (time ratio against the faster raw run)")
    print(
        f"search agent     {len(items) * arguments.k / search_seconds:8.2f} attempts/s  "
        f"{search_tokens / search_seconds:8.1f} tok/s  ({search_seconds:.1f} s, {solver.agent.max_turns} turns max)"
    )
    print(f"peak memory {peak_rss_mib():.0f} MiB")
    await pool.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=16)
    parser.add_argument("--model", default="embedded", help="A declared model: embedded (vLLM) or fake.")
    parser.add_argument("--k", type=int, default=2, help="Samples per item and condition.")
    parser.add_argument("--gold", action="store_true", help="Also time the gold-evidence requests.")
    arguments = parser.parse_args()
    with scratch_settings() as settings:
        asyncio.run(measure(arguments, settings))


if __name__ == "__main__":
    main()

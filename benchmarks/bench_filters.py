"""Throughput of the cheap filters on many items, each filter on its own.

    python benchmarks/bench_filters.py [--items 100000] [--benchmark-rows 20000] [--shortcut-items 5000]

Items are real multihop constructions from the bundled graph (a few hundred), multiplied by
swapping the named anchor and the answer for other entity names, so question lengths and
vocabulary are those of real items. Prints items/s per filter and the peak memory; the shortcut filter (one BM25
search per item) runs on a sample, since it is bounded by the retriever's speed, which
bench_search measures.
"""

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402

from synth.evalsets import BenchmarkItem  # noqa: E402
from synth.filters.contamination import ContaminationConfig, ContaminationFilter  # noqa: E402
from synth.filters.dedup import ExactDedupFilter  # noqa: E402
from synth.filters.format import FormatFilter  # noqa: E402
from synth.filters.leakage import LeakageFilter  # noqa: E402
from synth.filters.near_dup import NearDupConfig, NearDupFilter  # noqa: E402
from synth.filters.shortcut import ShortcutFilter  # noqa: E402
from synth.generators.base import Rejection  # noqa: E402
from synth.generators.multihop import MultihopGenerator  # noqa: E402
from synth.kg.snapshot import load_snapshot  # noqa: E402
from synth.pipelines.multihop import Config  # noqa: E402
from synth.search.corpus import Corpus  # noqa: E402
from synth.search.retrieval import BM25Retriever  # noqa: E402


def make_items(kg, count: int, seed: int = 0):
    config = Config()
    generator = MultihopGenerator(kg, config.walk, config.reverse, seed=seed)
    real = []
    while len(real) < 300:
        candidate = generator.attempt(random.Random(len(real)).choice([2, 3, 4]))
        if not isinstance(candidate, Rejection):
            real.append(candidate)
    names = sorted({entity.name for entity in kg.entities.values()})
    rng = random.Random(seed)
    items = []
    for index in range(count):
        base = real[index % len(real)]
        anchor = kg.name(base.constraints[0].anchor)
        if index < len(real):
            items.append(base)
            continue
        question = base.question.replace(anchor, rng.choice(names), 1)  # another anchor: another question and answer
        items.append(
            base.model_copy(
                update={"id": f"{base.id}-{index}", "question": question, "answer": rng.choice(names), "aliases": []}
            )
        )
    return items


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument(
        "--benchmark-rows", type=int, default=20_000, help="Size of the synthetic evaluation set for contamination."
    )
    parser.add_argument("--shortcut-items", type=int, default=5_000)
    arguments = parser.parse_args()
    kg = load_snapshot()
    started = time.perf_counter()
    items = make_items(kg, arguments.items)
    print(f"{len(items):,} items made in {time.perf_counter() - started:.1f} s")
    rng = random.Random(1)
    benchmark = [
        BenchmarkItem(
            "synthetic", str(index), rng.choice(items).question.replace("Which", "What", 1), (f"answer {index}",)
        )
        for index in range(arguments.benchmark_rows)
    ]
    corpus = Corpus.from_kg(kg)
    cache = Path("/tmp/synth-bench-filters")
    filters = [
        ("format", FormatFilter(), items),
        ("leakage", LeakageFilter(kg.names), items),
        ("dedup (exact)", ExactDedupFilter(), items),
        ("near_dup (MinHash LSH)", NearDupFilter(NearDupConfig()), items),
        (
            f"contamination ({len(benchmark):,} benchmark rows)",
            ContaminationFilter(ContaminationConfig(), benchmark),
            items,
        ),
        (
            "shortcut (BM25, k=10)",
            ShortcutFilter(corpus, BM25Retriever(corpus, cache, log=lambda line: None), 10),
            items[: arguments.shortcut_items],
        ),
    ]
    print(f"{'filter':<44} {'items':>8} {'items/s':>10} {'dropped':>8}")
    for name, stage, batch in filters:
        started = time.perf_counter()
        verdicts = []
        for start in range(0, len(batch), 1000):
            verdicts += stage.apply(batch[start : start + 1000])
        seconds = time.perf_counter() - started
        dropped = sum(not verdict.kept for verdict in verdicts)
        print(f"{name:<44} {len(batch):>8,} {len(batch) / seconds:>10,.0f} {dropped:>8,}")
    print(f"peak memory {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()

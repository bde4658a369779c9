"""Multihop construction throughput on the bundled graph, without LLM time, and where walks die.

    python benchmarks/bench_multihop.py [--attempts 3000] [--hops 2 3 4] [--policy random|longest]

Prints graph load time and memory, candidates/s and items/s of walk + reverse construction +
template verbalization + cheap filters, and the share of walks surviving each check.
"""

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402

from synth.filters.base import FilterChain  # noqa: E402
from synth.filters.dedup import ExactDedupFilter  # noqa: E402
from synth.filters.format import FormatFilter  # noqa: E402
from synth.filters.leakage import LeakageFilter  # noqa: E402
from synth.generators.base import Rejection  # noqa: E402
from synth.generators.multihop import MultihopGenerator  # noqa: E402
from synth.kg.snapshot import load_snapshot  # noqa: E402
from synth.pipelines.multihop import Config  # noqa: E402
from synth.search.corpus import KGCorpus  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=3000)
    parser.add_argument("--hops", type=int, nargs="+", default=[2, 3, 4])
    parser.add_argument("--policy", choices=["random", "longest"], default="random", help="Walk policy (walk.policy).")
    arguments = parser.parse_args()
    config = Config(walk={"policy": arguments.policy})
    started = time.perf_counter()
    full = load_snapshot()
    kg = full.without_relations(config.exclude_relations)  # as the recipe walks it
    load_seconds = time.perf_counter() - started
    print(
        f"graph: {kg.num_triples:,} triples, {len(kg.entities):,} entities, loaded in {load_seconds:.2f} s, peak "
        f"memory {peak_rss_mib():.0f} MiB"
    )
    for hops in arguments.hops:
        generator = MultihopGenerator(kg, config.walk, config.reverse, seed=0, evidence=KGCorpus(full))
        chain = FilterChain([FormatFilter(config.format), LeakageFilter(kg.names), ExactDedupFilter()])
        outcomes: Counter = Counter()
        kept = 0
        started = time.perf_counter()
        for _ in range(arguments.attempts):
            candidate = generator.attempt(hops)
            if isinstance(candidate, Rejection):
                outcomes[f"{candidate.stage}: {candidate.reason}"] += 1
            elif chain.run([candidate]):
                kept += 1
        seconds = time.perf_counter() - started
        for stage in chain.stages.values():
            for reason, count in stage.dropped.items():
                outcomes[f"{stage.stage}: {reason}"] += count
        print(
            f"\n{hops} hops: {arguments.attempts / seconds:,.0f} candidates/s, {kept / seconds:,.1f} items/s, "
            f"{kept}/{arguments.attempts} kept ({kept / arguments.attempts:.1%})"
        )
        survivors = arguments.attempts
        for check in ("walk", "uniqueness", "format", "leakage", "dedup"):
            dropped = sum(count for key, count in outcomes.items() if key.startswith(check + ":"))
            print(
                f"  survive {check:<10} {(survivors - dropped) / max(survivors, 1):6.1%}  "
                + ", ".join(
                    f"{key.split(': ')[1]} {count}" for key, count in outcomes.items() if key.startswith(check + ":")
                )
            )
            survivors -= dropped
    print(f"\npeak memory {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()

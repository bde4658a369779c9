"""Retrieval on the bundled world: index build time, query latency, and recall of edge-stating documents.

    python benchmarks/bench_search.py [--edges 500] [--queries 200] [--retrievers bm25 dense hybrid]

For a seeded sample of knowledge-graph edges, the query is the edge in words ("Gosford Park was
produced by Robert Altman") and the relevant document is the passage that states it (its evidence
id); recall@k is the share of edges whose passage is in the top k. Index builds run in a fresh cache
folder, so they are measured, not reloaded; latency is per single query (what an agent's tool call
costs), p50 and p95.
"""

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402

from synth.kg.snapshot import load_snapshot  # noqa: E402
from synth.search.corpus import Corpus, KGCorpus, fact_sentence  # noqa: E402
from synth.search.retrieval import BM25Retriever, DenseRetriever, HybridRetriever  # noqa: E402

KS = (1, 5, 10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=500, help="Edges sampled for recall.")
    parser.add_argument("--queries", type=int, default=200, help="Single queries timed for latency.")
    parser.add_argument(
        "--retrievers", nargs="+", default=["bm25", "dense", "hybrid"], choices=["bm25", "dense", "hybrid"]
    )
    arguments = parser.parse_args()

    kg = load_snapshot()
    started = time.perf_counter()
    corpus = Corpus.from_kg(kg)
    print(f"corpus: {len(corpus):,} documents from {kg.num_triples:,} triples in {time.perf_counter() - started:.1f} s")
    evidence = KGCorpus(kg)
    edges = random.Random(0).sample(list(kg.triples()), arguments.edges)
    queries = [fact_sentence(kg, *edge).rstrip(".") for edge in edges]
    targets = [corpus.position(evidence.evidence_id(*edge)) for edge in edges]

    with tempfile.TemporaryDirectory() as cache:
        cache_dir, built = Path(cache), {}
        quiet = lambda line: None  # noqa: E731
        for kind in ("bm25", "dense"):
            if kind in arguments.retrievers or "hybrid" in arguments.retrievers:
                started = time.perf_counter()
                built[kind] = (
                    BM25Retriever(corpus, cache_dir, log=quiet)
                    if kind == "bm25"
                    else DenseRetriever(corpus, cache_dir, log=quiet)
                )
                seconds = time.perf_counter() - started
                print(f"{kind} index: built in {seconds:.1f} s ({len(corpus) / seconds:,.0f} documents/s)")
        if "hybrid" in arguments.retrievers:
            built["hybrid"] = HybridRetriever(built["bm25"], built["dense"])

        print(
            f"\n{'retriever':>9} "
            + " ".join(f"{f'recall@{k}':>9}" for k in KS)
            + f" {'p50 ms':>8} {'p95 ms':>8} {'batch q/s':>10}"
        )
        for kind in arguments.retrievers:
            retriever = built[kind]
            started = time.perf_counter()
            results = retriever.search(queries, max(KS))
            batch_rate = len(queries) / (time.perf_counter() - started)
            recalls = [
                np.mean([target in [hit.position for hit in hits[:k]] for target, hits in zip(targets, results)])
                for k in KS
            ]
            latencies = []
            for query in queries[: arguments.queries]:
                began = time.perf_counter()
                retriever.search([query], 5)
                latencies.append((time.perf_counter() - began) * 1000)
            p50, p95 = np.percentile(latencies, [50, 95])
            print(
                f"{kind:>9} "
                + " ".join(f"{recall:>9.3f}" for recall in recalls)
                + f" {p50:>8.1f} {p95:>8.1f} {batch_rate:>10,.0f}"
            )
    print(
        f"\n{arguments.edges} edges sampled with seed 0; query = the edge in words without the final period; peak "
        f"memory {peak_rss_mib():.0f} MiB"
    )


if __name__ == "__main__":
    main()

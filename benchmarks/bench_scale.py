"""Worlds at scale: BM25 and the HNSW dense index over synthetic passages, and a big graph's load.

    python benchmarks/bench_scale.py [--passages 1000000] [--edges 20000000] [--queries 200]

Passages are 100 words (Search-R1's passage size) drawn from the bundled graph's entity
descriptions with their real frequencies, half of them from the passage's topic. Each index is built
in its own process through synth's own code (`BM25Retriever` over a `Corpus` read from JSONL into
its on-disk store, then mapped as every later run maps it;
`synth.search.ann.build_hnsw` over a float32 matrix), which reports build time, its peak memory
and single-query latency. Dense vectors here are not a neural model's (embedding 1M passages
takes hours on this CPU): each word gets a fixed random 384-dimensional vector scaled by its
rarity and a passage is the normalized sum of its words', so passages sharing topic words are
near, as with real embeddings.
Queries are 6 words of a random passage; recall@10 is the HNSW top 10 against exact search over
the same vectors. `--edges` imports a synthetic graph of that size (benchmarks/bench_kg.py) and
loads it memory-mapped. The last line reads
`ann_recall_at_10=<x> ann_p50_ms=<y> bm25_p50_ms=<z> kg_load_s=<w>` for the sizes it ran.
"""

import argparse
import gzip
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _measure import peak_rss_mib  # noqa: E402

DIMENSION = 384
EF_SWEEP = (64, 128, 256, 512)
TOPICS = 2000
RANK = 48


def vocabulary() -> tuple[np.ndarray, np.ndarray]:
    """(words, probabilities) of the bundled graph's entity descriptions."""
    counts: Counter = Counter()
    with gzip.open(ROOT / "data" / "fb15k237" / "entities.tsv.gz", "rt", encoding="utf-8") as handle:
        next(handle)
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            counts.update(word.strip(".,;:()\"'").lower() for word in fields[2].split() if len(fields) > 2)
    del counts[""]
    words = np.array(list(counts))
    frequencies = np.array(list(counts.values()), dtype=np.float64)
    return words, frequencies / frequencies.sum()


def make_passages(folder: Path, count: int, seed: int = 0) -> tuple[Path, Path]:
    """passages.jsonl (Search-R1 rows) and word ids per passage (.npy), 100 words each.

    Text has topics: each passage draws half its words from one of `TOPICS` topics (300 words
    each, picked by frequency) and half from the whole vocabulary, so passages about the same
    topic share words, as an encyclopedia's do."""
    words, probabilities = vocabulary()
    rng = np.random.default_rng(seed)
    topic_words = np.stack([rng.choice(len(words), size=300, replace=False, p=probabilities) for _ in range(TOPICS)])
    topics = rng.integers(0, TOPICS, count)
    ids = rng.choice(len(words), size=(count, 100), p=probabilities).astype(np.int32)
    from_topic = rng.random((count, 100)) < 0.5
    picks = topic_words[topics[:, None], rng.integers(0, 300, (count, 100))]
    ids[from_topic] = picks[from_topic]
    np.save(folder / "word_ids.npy", ids)
    np.save(folder / "word_weights.npy", -np.log(probabilities).astype(np.float32))  # idf-like: rare words weigh more
    path = folder / "passages.jsonl"
    with open(path, "w", encoding="utf-8") as handle:
        for start in range(0, count, 50_000):
            handle.writelines(
                json.dumps(
                    {"id": f"p{start + row}", "contents": f'"Passage {start + row}"\n' + " ".join(words[row_ids])}
                )
                + "\n"
                for row, row_ids in enumerate(ids[start : start + 50_000])
            )
    return path, folder / "word_ids.npy"


def queries_of(word_ids: np.ndarray, count: int, seed: int = 1) -> np.ndarray:
    """Word ids of `count` queries: 6 consecutive words of a random passage each."""
    rng = np.random.default_rng(seed)
    rows, starts = rng.integers(0, len(word_ids), count), rng.integers(0, 94, count)
    return np.stack([word_ids[row, start : start + 6] for row, start in zip(rows, starts)])


def embed(word_ids: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Normalized weighted sums of fixed random word vectors (rows of word ids -> float32 matrix)."""
    from scipy.sparse import csr_matrix

    rng = np.random.default_rng(7)  # words in a RANK-dimensional subspace: real embeddings' intrinsic dimension is low
    basis = rng.standard_normal((RANK, DIMENSION)).astype(np.float32)
    word_vectors = (rng.standard_normal((len(weights), RANK)).astype(np.float32) @ basis) * weights[:, None]
    out = np.empty((len(word_ids), DIMENSION), dtype=np.float32)
    for start in range(0, len(word_ids), 100_000):
        chunk = word_ids[start : start + 100_000]
        rows = np.repeat(np.arange(len(chunk)), chunk.shape[1])
        counts = csr_matrix(
            (np.ones(chunk.size, dtype=np.float32), (rows, chunk.ravel())), shape=(len(chunk), len(weights))
        )
        vectors = counts @ word_vectors
        out[start : start + len(chunk)] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return out


def peak_mib() -> float:
    """This process' peak resident memory (VmHWM: unlike ru_maxrss, not inherited from the parent)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return peak_rss_mib()


def resident_mib() -> float:
    """This process' resident memory now (VmRSS)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def latencies_ms(search, queries: list) -> tuple[float, float]:
    timings = []
    for query in queries:
        started = time.perf_counter()
        search(query)
        timings.append((time.perf_counter() - started) * 1000)
    return float(np.percentile(timings, 50)), float(np.percentile(timings, 95))


def child_bm25(folder: Path, queries: int) -> dict:
    from synth.search.corpus import Corpus
    from synth.search.retrieval import BM25Retriever

    baseline = peak_mib()
    started = time.perf_counter()
    Corpus.from_jsonl(folder / "passages.jsonl", folder / "corpus", log=lambda line: None)  # the store, written once
    store_s = time.perf_counter() - started
    store_peak = peak_mib()
    started = time.perf_counter()
    corpus = Corpus.from_jsonl(
        folder / "passages.jsonl", folder / "corpus", log=lambda line: None
    )  # what every later run does
    map_s = time.perf_counter() - started
    store_mib = sum(path.stat().st_size for path in (folder / "corpus").rglob("*") if path.is_file()) / 2**20
    rng = np.random.default_rng(2)
    ids = [f"p{row}" for row in rng.integers(0, len(corpus), queries)]
    open_p50, _ = latencies_ms(corpus.document, ids)
    resident = resident_mib()
    started = time.perf_counter()
    retriever = BM25Retriever(corpus, folder / "cache", log=lambda line: None)
    build_s = time.perf_counter() - started
    words = np.load(folder / "word_ids.npy", mmap_mode="r")
    vocabulary_words, _ = vocabulary()
    texts = [" ".join(vocabulary_words[row]) for row in queries_of(words, queries)]
    p50, p95 = latencies_ms(lambda text: retriever.search([text], 10), texts)
    return {
        "store_s": store_s,
        "store_peak_mib": store_peak,
        "map_s": map_s,
        "store_mib": store_mib,
        "open_p50_ms": open_p50,
        "mapped_rss_mib": resident,
        "build_s": build_s,
        "peak_mib": peak_mib(),
        "interpreter_mib": baseline,
        "p50_ms": p50,
        "p95_ms": p95,
    }


def child_ann(folder: Path, queries: int) -> dict:
    from synth.search.ann import EF_SEARCH, HnswIndex, build_hnsw

    baseline = peak_mib()
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    started = time.perf_counter()
    build_hnsw(vectors, folder / "index.faiss", log=lambda line: print(line, file=sys.stderr))
    build_s = time.perf_counter() - started
    build_peak = peak_mib()
    before = resident_mib()
    index = HnswIndex(folder / "index.faiss")
    loaded_mib = resident_mib() - before
    words = np.load(folder / "word_ids.npy", mmap_mode="r")
    query_vectors = embed(queries_of(words, queries), np.load(folder / "word_weights.npy"))
    exact = []
    for start in range(0, len(query_vectors), 25):  # exact top 10 over the whole matrix, a few queries at a time
        scores = query_vectors[start : start + 25] @ np.asarray(vectors).T
        exact += [set(row.tolist()) for row in np.argpartition(-scores, 10, axis=1)[:, :10]]
    sweep = {}
    for ef_search in sorted({*EF_SWEEP, EF_SEARCH}):  # the candidates a search keeps: recall against latency
        index.index.hnsw.efSearch = ef_search
        p50, p95 = latencies_ms(lambda vector: index.search(vector[None, :], 10), list(query_vectors))
        _, found = index.search(query_vectors, 10)
        recall = float(
            np.mean([len(row_exact & set(row_found.tolist())) / 10 for row_exact, row_found in zip(exact, found)])
        )
        sweep[ef_search] = {"p50_ms": p50, "p95_ms": p95, "recall_at_10": recall}
    return {
        "build_s": build_s,
        "build_peak_mib": build_peak,
        "interpreter_mib": baseline,
        "index_mib": (folder / "index.faiss").stat().st_size / 2**20,
        "loaded_mib": loaded_mib,
        "ef_search": EF_SEARCH,
        "sweep": sweep,
        **sweep[EF_SEARCH],
    }


def in_child(kind: str, folder: Path, queries: int) -> dict:
    output = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(folder), "--queries", str(queries)],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    ).stdout  # progress goes on to stderr
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=1_000_000)
    parser.add_argument(
        "--edges", type=int, default=0, help="Also import and load a synthetic graph of this many edges (20M: ~4 min)."
    )
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--skip-bm25", action="store_true", help="Only the HNSW index (its build is the long part).")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        kind, folder = arguments.child
        print(json.dumps((child_bm25 if kind == "bm25" else child_ann)(Path(folder), arguments.queries)))
        return

    figures = {}
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        if arguments.passages:
            started = time.perf_counter()
            _, word_ids_path = make_passages(folder, arguments.passages)
            word_ids = np.load(word_ids_path)
            np.save(folder / "vectors.npy", embed(word_ids, np.load(folder / "word_weights.npy")))
            del word_ids
            print(
                f"made {arguments.passages:,} passages of 100 words and their vectors in "
                f"{time.perf_counter() - started:.0f} s",
                file=sys.stderr,
            )
            bm25 = None if arguments.skip_bm25 else in_child("bm25", folder, arguments.queries)
            if bm25:
                print(
                    f"corpus {arguments.passages:>10,} passages: store written in {bm25['store_s']:.0f} s (peak "
                    f"{bm25['store_peak_mib']:,.0f} MiB), "
                    f"{bm25['store_mib']:,.0f} MiB on disk; mapped again in {bm25['map_s']:.2f} s, resident "
                    f"{bm25['mapped_rss_mib']:,.0f} MiB "
                    f"(interpreter {bm25['interpreter_mib']:,.0f}); open by id p50 {bm25['open_p50_ms']:.3f} ms"
                )
                print(
                    f"BM25   {arguments.passages:>10,} passages: index built {bm25['build_s']:.0f} s, "
                    f"peak {bm25['peak_mib']:,.0f} MiB (interpreter {bm25['interpreter_mib']:,.0f}); "
                    f"query p50 {bm25['p50_ms']:.1f} ms, p95 {bm25['p95_ms']:.1f} ms"
                )
            ann = in_child("ann", folder, arguments.queries)
            vectors_mib = arguments.passages * DIMENSION * 4 / 2**20
            print(
                f"HNSW   {arguments.passages:>10,} passages: built {ann['build_s']:.0f} s, index "
                f"{ann['index_mib']:,.0f} MiB "
                f"(vectors alone {vectors_mib:,.0f} MiB), build peak {ann['build_peak_mib']:,.0f} MiB, "
                f"resident after loading it mapped {ann['loaded_mib']:,.0f} MiB; "
                f"efSearch {ann['ef_search']}: query p50 {ann['p50_ms']:.2f} ms, p95 {ann['p95_ms']:.2f} ms; "
                f"recall@10 vs exact {ann['recall_at_10']:.3f}"
            )
            for ef_search, row in ann["sweep"].items():
                print(
                    f"  efSearch {ef_search:>4}: recall@10 {row['recall_at_10']:.3f}, p50 {row['p50_ms']:.2f} ms, "
                    f"p95 {row['p95_ms']:.2f} ms"
                )
            scale = 21_000_000 / arguments.passages
            print(
                f"at 21M passages (x{scale:.0f}): HNSW index ~{ann['index_mib'] * scale / 1024:,.0f} GiB"
                + (
                    f", corpus store ~{bm25['store_mib'] * scale / 1024:,.0f} GiB on disk, BM25 build peak "
                    f"~{bm25['peak_mib'] * scale / 1024:,.0f} GiB"
                    if bm25
                    else ""
                )
                + " (linear extrapolation)"
            )
            figures.update(ann_recall_at_10=f"{ann['recall_at_10']:.3f}", ann_p50_ms=f"{ann['p50_ms']:.2f}")
            if bm25:
                figures["bm25_p50_ms"] = f"{bm25['p50_ms']:.1f}"
        if arguments.edges:
            from bench_kg import measure, synthetic_graph

            source = synthetic_graph(folder / "graph", arguments.edges)
            loads: list[float] = []
            measure(f"synth-{arguments.edges}", source, folder / "kg", 1000, loads)
            figures["kg_load_s"] = f"{loads[-1]:.2f}"
    print(" ".join(f"{name}={value}" for name, value in figures.items()))


if __name__ == "__main__":
    main()

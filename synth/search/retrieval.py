"""Retrievers over a Corpus: BM25 (bm25s), dense (sentence-transformers) and their fusion.

Each index is built once per corpus and cached on disk under a folder named by the corpus
fingerprint (and the model, for dense), written to a temporary folder and renamed into place, so
a crash never leaves half an index and a rebuilt corpus never reuses a stale one.
"""

import json
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Protocol

import numpy as np

from synth.search.ann import ANN_MIN_DOCUMENTS, HnswIndex, build_hnsw
from synth.search.build_once import build_once
from synth.search.corpus import Corpus
from synth.search.embeddings import load_embedder

RRF_K = 60
"""Reciprocal-rank-fusion constant (Cormack et al. 2009): rank r adds 1 / (RRF_K + r)."""


@dataclass(frozen=True)
class Hit:
    position: int
    """The document's position in the corpus."""
    score: float


class Retriever(Protocol):
    def search(self, queries: list[str], k: int) -> list[list[Hit]]: ...


@cache
def _english_stemmer():
    """One Snowball stemmer for index and queries alike (made once, not per query)."""
    import Stemmer

    return Stemmer.Stemmer("english")


def import_bm25s():
    """bm25s, imported without numba.

    bm25s imports numba when it is installed (vLLM brings it), and numba's llvmlite bindings then
    break vLLM's CPU kernel registration in the same process (vllm/triton_utils/dispatcher.py
    scans every loaded module and trips over llvmlite's function wrappers). synth uses bm25s's
    numpy backend, so hiding numba during the import costs nothing.
    """
    if "bm25s" in sys.modules or "numba" in sys.modules:
        import bm25s

        return bm25s
    sys.modules["numba"] = None  # type: ignore[assignment]  # makes `import numba` raise ImportError
    try:
        import bm25s
    finally:
        del sys.modules["numba"]
    # its per-index DEBUG line would show in every Prefect task log
    logging.getLogger("bm25s").setLevel(max(logging.getLogger("bm25s").level, logging.INFO))
    return bm25s


class BM25Retriever:
    """Okapi BM25 via bm25s (English stopwords, Snowball stemming), memory-mapped from its cache."""

    def __init__(self, corpus: Corpus, cache_dir: Path, log: Callable[[str], None] = print):
        bm25s = import_bm25s()

        self.corpus = corpus
        self.folder = build_once(cache_dir / f"bm25-{corpus.fingerprint}", self._build, log, "BM25 index")
        self.index = bm25s.BM25.load(str(self.folder), mmap=True)

    @staticmethod
    def tokenize(texts: list[str]) -> list[list[str]]:
        bm25s = import_bm25s()

        tokens = bm25s.tokenize(
            texts, stopwords="en", stemmer=_english_stemmer(), return_ids=False, show_progress=False
        )
        return tokens  # pyright: ignore[reportReturnType]  (return_ids=False: lists of words)

    def _build(self, folder: Path) -> None:
        bm25s = import_bm25s()

        index = bm25s.BM25()
        index.index(
            self.tokenize([text for texts in self.corpus.search_texts(" ") for text in texts]), show_progress=False
        )
        index.save(str(folder))

    def search(self, queries: list[str], k: int) -> list[list[Hit]]:
        k = min(k, len(self.corpus))
        # n_threads=0 scores in this thread; 1 starts a one-worker pool per call (568 -> 262 us a search here)
        positions, scores = self.index.retrieve(self.tokenize(queries), k=k, show_progress=False, n_threads=0)
        return [
            [Hit(int(position), float(score)) for position, score in zip(row_positions, row_scores) if score > 0]
            for row_positions, row_scores in zip(positions, scores)
        ]


class DenseRetriever:
    """Cosine similarity of sentence-transformers embeddings (default: the bundled all-MiniLM-L6-v2):
    exact search over a memory-mapped float32 matrix for small corpora, a faiss HNSW index from
    `ANN_MIN_DOCUMENTS` passages on (`ann="auto"`; "exact" or "hnsw" to choose).

    The build embeds `checkpoint_every` documents at a time into a memory-mapped matrix and
    records how far it got after each batch, so a killed build resumes where it stopped."""

    def __init__(
        self,
        corpus: Corpus,
        cache_dir: Path,
        model_path: Path | None = None,
        log: Callable[[str], None] = print,
        batch_size: int = 128,
        checkpoint_every: int = 4096,
        ann: str = "auto",
    ):
        self.corpus = corpus
        self.log = log
        self.model, self.model_name = load_embedder(model_path)
        self.batch_size, self.checkpoint_every = batch_size, checkpoint_every
        self.embedded = 0
        """Documents this process embedded while building (0 when the index was cached)."""
        self.folder = build_once(
            cache_dir / f"dense-{self.model_name}-{corpus.fingerprint}",
            self._build,
            log,
            f"dense index ({self.model_name})",
            resumable=True,
        )
        self.vectors = np.load(self.folder / "vectors.npy", mmap_mode="r")
        self.ann = None
        if ann == "hnsw" or (ann == "auto" and len(corpus) >= ANN_MIN_DOCUMENTS):
            folder = build_once(
                cache_dir / f"hnsw-{self.model_name}-{corpus.fingerprint}",
                lambda staging: build_hnsw(self.vectors, staging / "index.faiss", log=log),
                log,
                "HNSW index",
            )
            self.ann = HnswIndex(folder / "index.faiss")

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        ).astype(np.float32)

    def _build(self, folder: Path) -> None:
        total = len(self.corpus)
        dimension = int(
            (getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension)() or 0
        )
        done, vectors = _resume(folder, total, dimension)
        if vectors is None:
            vectors = np.lib.format.open_memmap(
                folder / "vectors.npy", mode="w+", dtype=np.float32, shape=(total, dimension)
            )
        else:
            self.log(f"  resuming a killed build: {done:,}/{total:,} documents already embedded")
        started, resumed_at = time.perf_counter(), done
        while done < total:
            end = min(done + self.checkpoint_every, total)
            vectors[done:end] = self._encode(
                [text for texts in self.corpus.search_texts(". ", done, end) for text in texts]
            )
            vectors.flush()  # pyright: ignore[reportAttributeAccessIssue]  (a memmap) the vectors first, then the mark that says they are there
            _write_progress(folder, end, total, dimension)
            self.embedded += end - done
            done = end
            if done < total:
                rate = (done - resumed_at) / (time.perf_counter() - started)
                self.log(
                    f"  embedded {done:,}/{total:,} documents ({rate:,.0f}/s, about {(total - done) / rate:.0f} s left)"
                )
        del vectors
        (folder / "progress.json").unlink(missing_ok=True)
        self.log(f"  embedded {self.embedded:,} documents in this run ({resumed_at:,} were already embedded)")

    def search(self, queries: list[str], k: int) -> list[list[Hit]]:
        k = min(k, len(self.corpus))
        if self.ann is not None:
            scores, positions = self.ann.search(self._encode(queries), k)
            return [
                [
                    Hit(int(position), float(score))
                    for position, score in zip(row_positions, row_scores)
                    if position >= 0
                ]
                for row_positions, row_scores in zip(positions, scores)
            ]
        scores = self._encode(queries) @ np.asarray(self.vectors).T
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        results = []
        for row, candidates in zip(scores, top):
            ordered = candidates[np.argsort(-row[candidates], kind="stable")]
            results.append([Hit(int(position), float(row[position])) for position in ordered])
        return results


def _resume(folder: Path, total: int, dimension: int) -> tuple[int, np.ndarray | None]:
    """(documents already embedded, the matrix to go on filling) from a killed build, or (0, None)."""
    try:
        progress = json.loads((folder / "progress.json").read_text())
        if (progress["rows"], progress["dimension"]) != (total, dimension):
            return 0, None
        vectors = np.load(folder / "vectors.npy", mmap_mode="r+")
    except (OSError, ValueError, KeyError):
        return 0, None
    return (int(progress["done"]), vectors) if vectors.shape == (total, dimension) else (0, None)


def _write_progress(folder: Path, done: int, rows: int, dimension: int) -> None:
    partial = folder / "progress.json.partial"
    partial.write_text(json.dumps({"done": done, "rows": rows, "dimension": dimension}))
    partial.replace(folder / "progress.json")


class HybridRetriever:
    """BM25 and dense lists fused by reciprocal rank: robust to their different score scales."""

    def __init__(self, sparse: BM25Retriever, dense: DenseRetriever, depth: int = 50):
        self.sparse, self.dense, self.depth = sparse, dense, depth

    def search(self, queries: list[str], k: int) -> list[list[Hit]]:
        fused_rows = []
        for sparse_hits, dense_hits in zip(
            self.sparse.search(queries, self.depth), self.dense.search(queries, self.depth)
        ):
            fused: dict[int, float] = {}
            for hits in (sparse_hits, dense_hits):
                for rank, hit in enumerate(hits, start=1):
                    fused[hit.position] = fused.get(hit.position, 0.0) + 1.0 / (RRF_K + rank)
            ordered = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]
            fused_rows.append([Hit(position, score) for position, score in ordered])
        return fused_rows

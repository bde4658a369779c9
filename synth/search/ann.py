"""Approximate nearest-neighbour search over a dense index's vectors: faiss HNSW.

Exact search multiplies every query by the whole matrix (180 ms a query at 1M passages on two
cores); a graph index answers in a few milliseconds with recall near 0.98 (efSearch 512). faiss rather than
usearch or hnswlib: it is what Search-R1's e5 retrieval server already uses (so its users have
it), it is maintained by Meta with CPU and GPU builds, and it offers compressed indexes (IVF-PQ)
for when a corpus' raw vectors no longer fit in memory. HNSW (`IndexHNSWFlat`, inner product on
normalized vectors = cosine) keeps the float32 vectors plus about 2 x M neighbour ids per vector.
"""

import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HNSW_M = 32
"""Neighbours per node: recall and memory grow with it (faiss' usual 32)."""
EF_CONSTRUCTION = 80
EF_SEARCH = 512
"""Candidates a search keeps. On bench_scale's 1M passages (M=32, efConstruction 80), recall@10
against exact search was 0.82 at 128, 0.93 at 256 and 0.978 at 512 (p50 6.0 ms): 512 is the
smallest of those that holds 0.95."""
ANN_MIN_DOCUMENTS = 200_000
"""Below this, exact search is fast enough (~30 ms a query on two cores) and exact."""


def bytes_per_vector(dimension: int, m: int = HNSW_M) -> int:
    """Memory of one vector in the HNSW index: the float32 vector and its level-0 links (upper levels add ~3%)."""
    return 4 * dimension + 4 * 2 * m


def build_hnsw(
    vectors: np.ndarray,
    path: Path,
    log: Callable[[str], None] = print,
    batch: int = 100_000,
    m: int = HNSW_M,
    ef_construction: int = EF_CONSTRUCTION,
) -> None:
    """An HNSW index of `vectors` (rows normalized), added in batches with progress, written to `path`."""
    import faiss

    index = faiss.IndexHNSWFlat(vectors.shape[1], m, faiss.METRIC_INNER_PRODUCT)
    index.hnsw.efConstruction = ef_construction
    started, total = time.perf_counter(), len(vectors)
    for start in range(0, total, batch):
        index.add(np.ascontiguousarray(vectors[start : start + batch], dtype=np.float32))
        done = min(start + batch, total)
        if done < total:
            rate = done / (time.perf_counter() - started)
            log(f"  HNSW: added {done:,}/{total:,} vectors ({rate:,.0f}/s, about {(total - done) / rate:.0f} s left)")
    faiss.write_index(index, str(path))


class HnswIndex:
    """A saved HNSW index, its vectors memory-mapped from the file (faiss' IO_FLAG_MMAP_IFC: 200k
    vectors of 384 dimensions take 28 MiB resident instead of 318, and the same results):
    `search(query_vectors, k)` -> (scores, positions), best first."""

    def __init__(self, path: Path, ef_search: int = EF_SEARCH):
        import faiss

        self.path = path
        self.index = faiss.read_index(str(path), getattr(faiss, "IO_FLAG_MMAP_IFC", 0))
        self.index.hnsw.efSearch = ef_search  # pyright: ignore[reportAttributeAccessIssue]  (an HNSW index)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        self.index.hnsw.efSearch = max(self.index.hnsw.efSearch, k)  # pyright: ignore[reportAttributeAccessIssue]
        return self.index.search(np.ascontiguousarray(queries, dtype=np.float32), k)

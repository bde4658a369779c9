"""Searches of concurrent rollouts, off the event loop and in batches.

Hundreds of rollouts run as coroutines on one event loop; a search run inline would stop all of
them for its duration (a dense retriever encodes the query on the CPU, tens of milliseconds). So an
agent's searches go through a batcher: every search asked for while the loop runs one round of
ready coroutines is gathered, and the lot goes to the retriever as one `search(queries, k)` call in
a worker thread while the loop keeps serving model replies. One worker, because the retrievers are
not thread-safe (bm25s' stemmer, a lazily loaded encoder) and batching is what makes them fast; a
batch that arrives while one runs waits and goes next, as one call again.
"""

import asyncio
from concurrent.futures import ThreadPoolExecutor

from synth.search.retrieval import Hit, Retriever


class SearchBatcher:
    def __init__(self, retriever: Retriever):
        self.retriever = retriever
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="synth-retrieval")
        self._waiting: list[tuple[list[str], int, asyncio.Future]] = []
        self._draining = False
        self.calls = 0
        """Retriever calls made (each a batch of every search gathered)."""

    async def search(self, queries: list[str], k: int) -> list[list[Hit]]:
        """The retriever's hits for `queries`, from a batched call in the worker thread."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._waiting.append((queries, k, future))
        if not self._draining:
            self._draining = True
            loop.create_task(self._drain())  # runs after the coroutines ready now have asked too
        return await future

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self._waiting:
                batch, self._waiting = self._waiting, []
                by_k: dict[int, list[tuple[list[str], int, asyncio.Future]]] = {}
                for entry in batch:
                    by_k.setdefault(entry[1], []).append(entry)
                for k, entries in by_k.items():
                    queries = [query for entry in entries for query in entry[0]]
                    self.calls += 1
                    try:
                        hits = await loop.run_in_executor(self._executor, self.retriever.search, queries, k)
                    except Exception as error:  # a retriever failure is every waiting search's failure
                        for _, _, future in entries:
                            if not future.done():
                                future.set_exception(error)
                        continue
                    start = 0
                    for asked, _, future in entries:
                        if not future.done():
                            future.set_result(hits[start : start + len(asked)])
                        start += len(asked)
        finally:
            self._draining = False

"""Agents' searches run off the event loop, and concurrent rollouts' searches share one retriever call."""

import asyncio
import threading

from synth.search.batcher import SearchBatcher
from synth.search.retrieval import Hit


class GatedRetriever:
    """Records each call (its queries and thread); the first call waits until the test opens the gate."""

    def __init__(self):
        self.calls: list[tuple[list[str], int, str]] = []
        self.gate = threading.Event()
        self.gate_opened_by_loop = False

    def search(self, queries: list[str], k: int) -> list[list[Hit]]:
        if not self.calls:
            self.gate_opened_by_loop = self.gate.wait(timeout=10)  # a search on the event loop would never see it open
        self.calls.append((list(queries), k, threading.current_thread().name))
        return [[Hit(position=len(query), score=1.0)] for query in queries]


def test_a_slow_search_does_not_stop_the_event_loop_and_concurrent_searches_are_batched():
    retriever = GatedRetriever()
    batcher = SearchBatcher(retriever)

    async def go():
        first = asyncio.ensure_future(batcher.search(["a"], 3))
        await asyncio.sleep(0)  # the first search is now in the worker thread, waiting at the gate
        later = [asyncio.ensure_future(batcher.search([f"q{i}", f"qq{i}"], 3)) for i in range(5)]
        other_k = asyncio.ensure_future(batcher.search(["z"], 7))
        await asyncio.sleep(0.05)
        retriever.gate.set()  # only possible because the loop is free while the search runs
        return await first, await asyncio.gather(*later), await other_k

    first, later, other_k = asyncio.run(go())
    assert retriever.gate_opened_by_loop
    assert [call[0] for call in retriever.calls] == [["a"], [q for i in range(5) for q in (f"q{i}", f"qq{i}")], ["z"]]
    assert [call[1] for call in retriever.calls] == [3, 3, 7] and batcher.calls == 3
    assert all(call[2].startswith("synth-retrieval") for call in retriever.calls)
    assert first == [[Hit(position=1, score=1.0)]]
    assert later[2] == [
        [Hit(position=2, score=1.0)],
        [Hit(position=3, score=1.0)],
    ]  # each caller gets its own hits back
    assert other_k == [[Hit(position=1, score=1.0)]]


def test_a_failing_retriever_fails_every_search_of_its_batch_only():
    class Failing:
        def __init__(self):
            self.calls = 0

        def search(self, queries, k):
            self.calls += 1
            if self.calls == 1:
                raise RuntimeError("index unreadable")
            return [[] for _ in queries]

    batcher = SearchBatcher(Failing())

    async def go():
        results = await asyncio.gather(batcher.search(["a"], 3), batcher.search(["b"], 3), return_exceptions=True)
        return results, await batcher.search(["c"], 3)

    (first, second), after = asyncio.run(go())
    assert isinstance(first, RuntimeError) and isinstance(second, RuntimeError) and after == [[]]

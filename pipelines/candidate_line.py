"""Handing candidates out while construction goes on: in acceptance order, each after its
rephrasing (verbalizer=llm), so a streaming run starts an item's panel as soon as it is final and
the order it sees never depends on model latency."""

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from synth.generators.llm_verbalizer import LLMVerbalizer, VerbalizeReport
from synth.schemas import Item


class Rephrasing:
    """Rephrases candidates one at a time as they are accepted, and adds up the reports."""

    def __init__(self, verbalizer: LLMVerbalizer):
        self.verbalizer = verbalizer
        self.report = VerbalizeReport()

    async def rephrase(self, item: Item) -> Item:
        [phrased], report = await self.verbalizer.rephrase([item])
        self.report.rephrased += report.rephrased
        self.report.judged += report.judged
        self.report.fallbacks.update(report.fallbacks)
        return phrased

    def record(self, statistics: dict) -> None:
        statistics.update(
            verbalizer=self.verbalizer.name,
            llm_rephrased=self.report.rephrased,
            template_fallbacks=dict(self.report.fallbacks),
        )
        if self.verbalizer.judge is not None:
            statistics["rephrasings_judged"] = self.report.judged


class CandidateLine:
    """Candidates (or their pending rephrasings) in acceptance order: each is emitted once it and
    every candidate before it are ready, so the order a run sees never depends on model latency."""

    def __init__(self, emit: Callable[[Item], None]):
        self.emit = emit
        self.pending: list[asyncio.Task[Item] | Item] = []
        self.items: list[Item] = []

    def add(self, item: "Item | Coroutine[Any, Any, Item]") -> None:
        if isinstance(item, Item):
            self.pending.append(item)
        else:
            task = asyncio.ensure_future(item)
            task.add_done_callback(lambda _: self._flush())
            self.pending.append(task)
        self._flush()

    def _flush(self) -> None:
        """Emit the ready head of the line; stop at one still pending (or failed: `finish` raises it)."""
        while self.pending:
            head = self.pending[0]
            if not isinstance(head, Item):
                if not head.done() or head.cancelled() or head.exception() is not None:
                    return
                head = head.result()
            self.pending.pop(0)
            self.items.append(head)
            self.emit(head)

    async def finish(self) -> list[Item]:
        """Every candidate, once each is ready and emitted (a failed rephrasing raises here)."""
        while self.pending:
            head = self.pending[0]
            if not isinstance(head, Item):
                await head  # raises its failure
            self._flush()
        return self.items

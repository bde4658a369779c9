"""The limiter admits at most `limit` holders, and lets deeper conversations in first."""

import asyncio

from synth.llm.concurrency import AdaptiveLimiter


def test_waiters_go_in_order_of_priority_then_arrival():
    order: list[str] = []

    async def main() -> None:
        limiter = AdaptiveLimiter(1)
        gate = asyncio.Event()

        async def hold() -> None:
            async with limiter.slot(0):
                await gate.wait()

        async def ask(name: str, priority: int) -> None:
            async with limiter.slot(priority):
                order.append(name)

        holder = asyncio.create_task(hold())
        await asyncio.sleep(0)
        waiters = [asyncio.create_task(ask(name, priority)) for name, priority in
                   [("first turn a", 2), ("deep turn", 9), ("first turn b", 2), ("middle turn", 5)]]
        await asyncio.sleep(0)
        assert limiter.in_flight == 1
        gate.set()
        await asyncio.gather(holder, *waiters)

    asyncio.run(main())
    assert order == ["deep turn", "middle turn", "first turn a", "first turn b"]


def test_never_more_than_the_limit_in_flight():
    peak = 0

    async def main() -> None:
        nonlocal peak
        limiter = AdaptiveLimiter(3)

        async def work(priority: int) -> None:
            nonlocal peak
            async with limiter.slot(priority):
                peak = max(peak, limiter.in_flight)
                await asyncio.sleep(0.001)

        await asyncio.gather(*(work(index % 5) for index in range(50)))

    asyncio.run(main())
    assert peak == 3

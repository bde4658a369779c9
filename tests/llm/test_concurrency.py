"""The limiter admits at most `limit` holders, in order of arrival."""

import asyncio

from synth.llm.concurrency import AdaptiveLimiter


def test_waiters_go_in_order_of_arrival():
    order: list[str] = []

    async def main() -> None:
        limiter = AdaptiveLimiter(1)
        gate = asyncio.Event()

        async def hold() -> None:
            async with limiter:
                await gate.wait()

        async def ask(name: str) -> None:
            async with limiter:
                order.append(name)

        holder = asyncio.create_task(hold())
        await asyncio.sleep(0)
        waiters = []
        for name in ["first", "second", "third", "fourth"]:
            waiters.append(asyncio.create_task(ask(name)))
            await asyncio.sleep(0)  # each queued before the next is created
        await asyncio.sleep(0)
        assert limiter.in_flight == 1
        gate.set()
        await asyncio.gather(holder, *waiters)

    asyncio.run(main())
    assert order == ["first", "second", "third", "fourth"]


def test_never_more_than_the_limit_in_flight():
    peak = 0

    async def main() -> None:
        nonlocal peak
        limiter = AdaptiveLimiter(3)

        async def work() -> None:
            nonlocal peak
            async with limiter:
                peak = max(peak, limiter.in_flight)
                await asyncio.sleep(0.001)

        await asyncio.gather(*(work() for _ in range(50)))

    asyncio.run(main())
    assert peak == 3

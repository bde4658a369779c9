"""Adaptive concurrency for remote model servers, and load spread over replicas.

The limiter is AIMD, as TCP congestion control and Netflix's concurrency-limits do it: an overload
signal (429, 503, a timeout) halves the number of requests allowed in flight; every `limit`
successes add one back, up to the configured ceiling. So a run slows down when the server says so
instead of dying, and speeds up again when it recovers.
"""

import asyncio
import random
import time
from collections import deque
from dataclasses import dataclass, field


class AdaptiveLimiter:
    """Async context manager admitting at most `limit` holders, in order of arrival.

    Waiters queue as futures and a release wakes exactly one, so thousands of queued requests cost
    nothing while they wait. Arrival order, not "deepest conversation first": in the scheduling
    model of long-tailed rollouts (`python benchmarks/bench_rollouts.py --simulate`, 64 to 8,192
    rollouts on 16 and 64 slots) deepest-first wins where rollouts are few per slot (128 on 16:
    1.06x the ideal against 1.19x) and loses more where they are many (512 on 16: 1.46x against
    1.22x; 2,048 on 64: 1.44x against 1.21x), because it starts the last rollouts so late that
    their tails run alone. Only a schedule that knew every rollout's length reaches 1.00x.
    """

    def __init__(self, ceiling: int, floor: int = 1, initial: int | None = None):
        if ceiling < 1 or floor < 1 or floor > ceiling:
            raise ValueError(f"need 1 <= floor <= ceiling, got floor={floor} ceiling={ceiling}")
        self.ceiling = ceiling
        self.floor = floor
        self.limit = float(initial if initial is not None else ceiling)
        self.in_flight = 0
        self.cuts = 0
        self._last_cut = float("-inf")
        self._waiters: deque[asyncio.Future] = deque()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def __aenter__(self) -> "AdaptiveLimiter":
        await self.acquire()
        return self

    async def __aexit__(self, *exc_info) -> None:
        self._release()

    async def acquire(self, first: bool = False) -> None:
        """A slot, in order of arrival; `first` goes ahead of every waiter (a hedge: it finishes a
        request already under way, which new requests should not hold up)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a later asyncio.run starts afresh; the learned limit carries over
            self._loop, self.in_flight, self._waiters = loop, 0, deque()
        if (first or not self._waiters) and self.in_flight < int(self.limit):
            self.in_flight += 1
            return
        waiter = loop.create_future()
        if first:
            self._waiters.appendleft(waiter)
        else:
            self._waiters.append(waiter)
        try:
            await waiter  # the slot was taken for us by _wake
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()
            raise

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def release(self) -> None:
        """Give back a slot taken with `acquire` (for holders that leave before they finish)."""
        self._release()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < int(self.limit):
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)

    def on_success(self) -> None:
        """Additive increase: one more slot per `limit` successes."""
        self.limit = min(float(self.ceiling), self.limit + 1.0 / max(self.limit, 1.0))
        self._wake()

    def on_overload(self, started_at: float) -> None:
        """Multiplicative decrease, once per round: requests sent before the last cut (their
        overload was already answered by it) do not cut again. `started_at` is time.monotonic()."""
        if started_at < self._last_cut:
            return
        self.limit = max(float(self.floor), self.limit / 2)
        self._last_cut = time.monotonic()
        self.cuts += 1


@dataclass
class Endpoint:
    url: str
    in_flight: int = 0
    failures_in_a_row: int = 0
    cooldown_until: float = 0.0
    served: int = 0


@dataclass
class EndpointPool:
    """Picks the replica with the fewest requests in flight, skipping those cooling down after
    connection failures or 5xx answers (cool-down doubles per failure in a row, up to `max_cooldown_s`)."""

    urls: list[str]
    base_cooldown_s: float = 1.0
    max_cooldown_s: float = 30.0
    endpoints: list[Endpoint] = field(init=False)

    def __post_init__(self) -> None:
        if not self.urls:
            raise ValueError("an endpoint pool needs at least one URL")
        self.endpoints = [Endpoint(url.rstrip("/")) for url in self.urls]

    def pick(self) -> tuple[Endpoint, float]:
        """(endpoint, seconds to wait before using it): zero unless every replica is cooling down."""
        now = time.monotonic()
        ready = [endpoint for endpoint in self.endpoints if endpoint.cooldown_until <= now]
        if ready:
            fewest = min(endpoint.in_flight for endpoint in ready)
            return random.choice([endpoint for endpoint in ready if endpoint.in_flight == fewest]), 0.0
        soonest = min(self.endpoints, key=lambda endpoint: endpoint.cooldown_until)
        return soonest, soonest.cooldown_until - now

    def succeeded(self, endpoint: Endpoint) -> None:
        endpoint.failures_in_a_row = 0
        endpoint.served += 1

    def failed(self, endpoint: Endpoint) -> None:
        endpoint.failures_in_a_row += 1
        delay = min(self.max_cooldown_s, self.base_cooldown_s * 2 ** (endpoint.failures_in_a_row - 1))
        endpoint.cooldown_until = time.monotonic() + delay if len(self.endpoints) > 1 else 0.0


def backoff_delay(attempt: int, base_s: float, cap_s: float, retry_after_s: float | None = None) -> float:
    """Exponential backoff with full jitter (AWS architecture blog), never shorter than Retry-After."""
    delay = random.uniform(0, min(cap_s, base_s * 2 ** (attempt - 1)))
    return max(delay, retry_after_s or 0.0)


@dataclass
class CircuitBreaker:
    """Stops hammering a server that fails every call (refuses connections, answers 5xx or
    garbage, hangs), without giving up on one that is only slow to recover.

    After `threshold` failed attempts in a row over at least `window_s` with no success, the
    circuit opens: requests stop being sent and wait. One probe goes out after 1 s, then after
    2, 4, ... up to `max_probe_gap_s`; a probe that is answered closes the circuit and every
    waiting request goes on (so a server that fails each request's first tries and then answers
    loses nothing). If no probe is answered within `give_up_s` of opening, waiting requests fail
    unsent, and the failure gate stops the run. Overload answers (429) and faults of the request
    itself do not count: the server is alive."""

    threshold: int = 16
    window_s: float = 10.0
    give_up_s: float = 60.0
    max_probe_gap_s: float = 16.0
    failures_in_a_row: int = 0
    failing_since: float | None = None
    """The last success, or the first attempt if none succeeded yet (a hung server fails its first
    attempts only after `timeout_s`, long past the window)."""
    opened_at: float | None = None
    next_probe: float = 0.0
    probe_gap: float = 1.0
    last_reason: str = ""
    last_detail: str = ""
    trips: int = 0
    probing: bool = False

    def admit(self) -> float | None:
        """0: send now (as the probe, if the circuit is open); > 0: ask again after that many
        seconds; None: give up, the server has not answered for `give_up_s`."""
        if self.opened_at is None:
            return 0.0
        now = time.monotonic()
        if now - self.opened_at >= self.give_up_s:
            return None
        if self.probing or now < self.next_probe:
            return max(0.05, min(self.next_probe - now, 1.0))
        self.probing = True
        return 0.0

    def sending(self) -> None:
        """An attempt goes out: a server that never answered has been failing since the first one."""
        if self.failing_since is None:
            self.failing_since = time.monotonic()

    def succeeded(self) -> None:
        self.failures_in_a_row, self.opened_at, self.probing, self.probe_gap = 0, None, False, 1.0
        self.failing_since = time.monotonic()

    def failed(self, reason: str, detail: str) -> None:
        now = time.monotonic()
        self.failures_in_a_row += 1
        self.failing_since = self.failing_since or now
        self.last_reason, self.last_detail = reason, detail
        if self.opened_at is not None:
            if self.probing:  # the probe failed: wait longer before the next one
                self.probing = False
                self.probe_gap = min(self.max_probe_gap_s, self.probe_gap * 2)
                self.next_probe = now + self.probe_gap
            return
        if self.failures_in_a_row >= self.threshold and now - self.failing_since >= self.window_s:
            self.opened_at, self.next_probe, self.probe_gap, self.trips = now, now + 1.0, 1.0, self.trips + 1

    def released(self) -> None:
        """An attempt ended in neither an answer nor a server fault (429, a bad request): a probe
        that says nothing lets the next one go at once."""
        if self.probing:
            self.probing, self.next_probe = False, time.monotonic()

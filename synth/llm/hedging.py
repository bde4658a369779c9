"""When to send a second copy of a request that is taking too long (a hedged request, as in Dean and
Barroso's "The Tail at Scale").

A hung attempt otherwise costs a whole client timeout, and an agent's calls are chained: a rollout
of ten turns against a server that hangs each call twice waited twenty timeouts. With hedging, an
attempt still unanswered after `after_s()` gets an identical twin (the server may send it to
another replica, or answer it where the first was dropped); the first answer wins and the others
are cancelled.

How long is too long is learned, because a served model's latency is long-tailed (a reasoning
model answers one prompt in 2 s and the next in 40 s, legitimately). The delay is a multiple of the
recent 90th-percentile answer time, and the multiple moves with what hedges turn out to be: when
the earlier attempt answers first anyway, the hedge was wasted and the multiple grows (x1.5, up to
`MAX_MULTIPLE`); when a hedge answers first, the earlier attempt was hung and the multiple shrinks
(x0.7, down to `MIN_MULTIPLE`), settling where about half the hedges win. A healthy server with a
long tail thus sees few hedges, and a hanging one is hedged about when it usually answers.

Before any answer there is no usual time: the first attempts wait their whole timeout. Once one
of them has hung, though, every attempt still out (and every retry) is hedged after `COLD_FRACTION`
of the timeout: without this, a server that hangs each request's first tries would have every
request wait several whole timeouts before the first answer told the client what usual is.
"""

import statistics
from collections import deque

SAMPLES = 64
"""Answer times the percentile is read from (the most recent)."""
MIN_SAMPLES = 8
"""Answers before the 90th percentile is read; with fewer, the slowest of them is the usual time."""
MIN_MULTIPLE, START_MULTIPLE, MAX_MULTIPLE = 0.5, 3.0, 8.0
COLD_FRACTION = 0.125
"""Of the client timeout: the hedge delay of a retry after a hang, while no answer has set the usual time."""
MIN_DELAY_S = 0.1
MAX_HEDGES = 2
"""Twins per request at most (three attempts out at once)."""


class HedgePolicy:
    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.multiple = START_MULTIPLE
        self._answers: deque[float] = deque(maxlen=SAMPLES)
        self.sent = 0
        """Hedges sent."""
        self.won = 0
        """Hedges that answered before every earlier attempt of their request."""
        self.hang_seen = False
        """An attempt timed out (while no answer has come, every attempt out is then hedged early)."""

    def hung(self) -> None:
        """An attempt went unanswered for the client's whole timeout."""
        self.hang_seen = True

    def answered(self, latency_s: float) -> None:
        """An attempt was answered after `latency_s` (its own time, from when it was sent)."""
        self._answers.append(latency_s)

    def after_s(self, timeout_s: float | None = None) -> float | None:
        """How long an attempt may go unanswered before its request is hedged; None: not yet (or off).
        `timeout_s`: the client's timeout (what the delay is a fraction of before any answer)."""
        if not self.enabled:
            return None
        if not self._answers:
            return COLD_FRACTION * timeout_s if self.hang_seen and timeout_s else None
        if len(self._answers) < MIN_SAMPLES:
            usual = max(self._answers)
        else:
            usual = statistics.quantiles(self._answers, n=10)[-1]
        return max(MIN_DELAY_S, self.multiple * usual)

    def outcome(self, winner: int, hedges: int) -> None:
        """A request that was hedged `hedges` times was answered by attempt `winner` (0: the first)."""
        if hedges == 0:
            return
        if winner == 0:
            self.multiple = min(MAX_MULTIPLE, self.multiple * 1.5)
        else:
            self.won += 1
            self.multiple = max(MIN_MULTIPLE, self.multiple * 0.7)

"""Accounting of model calls: tokens, requests, cache hits, failures and latency per stage and model,
a cost estimate from configured prices, and a budget that stops a run before it is exceeded."""

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import Context, ContextVar, copy_context
from dataclasses import dataclass, field

from pydantic import Field

from synth.config import FrozenConfig
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure

CHARS_PER_TOKEN = 3.5
"""Conservative characters-per-token ratio for estimating a prompt before it is tokenized."""


class Price(FrozenConfig):
    input_per_mtok: float = Field(default=0.0, ge=0, description="USD per million prompt tokens.")
    output_per_mtok: float = Field(default=0.0, ge=0, description="USD per million completion tokens.")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


class Budget(FrozenConfig):
    max_cost_usd: float | None = Field(default=None, ge=0, description="Stop before the estimated cost passes this.")
    max_tokens: int | None = Field(default=None, ge=0, description="Stop before prompt + completion tokens pass this.")


@dataclass
class StageModelTotals:
    requests: int = 0
    cache_hits: int = 0
    sent: int = 0
    """Attempts that reached the backend (retries included): what a server counts."""
    retries: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reasoning_tokens: int = 0
    """Of the completion tokens, those spent reasoning (the server's count, else estimated)."""
    latency_s: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def estimate_tokens(request: ChatRequest) -> tuple[int, int]:
    """Upper-bound guess of (prompt, completion) tokens for a request not yet sent."""
    characters = sum(len(str(message.get("content") or "")) for message in request.messages)
    characters += sum(len(str(tool)) for tool in request.tools or [])
    return int(characters / CHARS_PER_TOKEN) + 8 * len(
        request.messages
    ), request.sampling.max_tokens * request.sampling.n


@dataclass
class Ledger:
    """Running totals of one run; `summary()` goes into the dataset version and the printed summary."""

    prices: dict[str, Price] = field(default_factory=dict)
    budget: Budget = field(default_factory=Budget)
    totals: dict[tuple[str, str], StageModelTotals] = field(default_factory=dict)
    exhausted: bool = False
    """Set once a request was refused for budget: the run should stop and publish what it has."""
    reserved_tokens: int = 0
    reserved_cost: float = 0.0
    """Estimates held by requests in flight, so concurrent senders cannot overshoot together."""
    last_failures: dict[tuple[str, str], dict[str, LLMFailure]] = field(default_factory=dict)
    """The latest failure per (stage, model) and reason, in this process: what the failure gate quotes."""

    def _entry(self, stage: str, model: str) -> StageModelTotals:
        return self.totals.setdefault((stage, model), StageModelTotals())

    def record(self, request: ChatRequest, model: str, result: ChatResponse | LLMFailure) -> None:
        self._add(request, model, result)
        stage = _STAGE_LEDGER.get()
        if stage is not None and stage is not self:
            stage._add(request, model, result)

    @contextmanager
    def stage(self) -> Iterator["Ledger"]:
        """A ledger that also receives every call recorded in this context (and in the asyncio tasks
        it starts): one run stage's own calls, even while other stages run in the same event loop."""
        own = Ledger(prices=self.prices)
        token = _STAGE_LEDGER.set(own)
        try:
            yield own
        finally:
            _STAGE_LEDGER.reset(token)

    def stage_context(self) -> tuple["Ledger", Context]:
        """`stage` for work handed to asyncio tasks that other code starts: a stage's own ledger,
        and a context to start its tasks in (`asyncio.create_task(..., context=...)`)."""
        own = Ledger(prices=self.prices)
        context = copy_context()
        context.run(_STAGE_LEDGER.set, own)
        return own, context

    def _add(self, request: ChatRequest, model: str, result: ChatResponse | LLMFailure) -> None:
        entry = self._entry(request.stage, model)
        entry.requests += 1
        if isinstance(result, LLMFailure):
            entry.failures[result.reason] += 1
            entry.sent += result.attempts
            entry.retries.update(result.retries)
            latest = self.last_failures.setdefault((request.stage, model), {})
            if result.attempts or result.reason not in latest:  # quote a failure the server gave, not an unsent one
                latest[result.reason] = result
        elif result.cached:
            entry.cache_hits += 1
        else:
            entry.sent += result.attempts
            entry.retries.update(result.retries)
            entry.prompt_tokens += result.usage.prompt_tokens
            entry.completion_tokens += result.usage.completion_tokens
            entry.reasoning_tokens += result.reasoning_tokens
            entry.latency_s += result.latency_s

    def export(self) -> list[dict]:
        """The totals as JSON rows, for a stage's saved state."""
        return [
            {
                "stage": stage,
                "model": model,
                "requests": entry.requests,
                "cache_hits": entry.cache_hits,
                "sent": entry.sent,
                "retries": dict(entry.retries),
                "failures": dict(entry.failures),
                "prompt_tokens": entry.prompt_tokens,
                "completion_tokens": entry.completion_tokens,
                "reasoning_tokens": entry.reasoning_tokens,
                "latency_s": entry.latency_s,
            }
            for (stage, model), entry in sorted(self.totals.items())
        ]

    def absorb(self, rows: list[dict]) -> None:
        """Add totals exported elsewhere (a stage finished by an earlier process or another worker),
        so the summary and the budget cover the whole run."""
        for row in rows:
            entry = self._entry(row["stage"], row["model"])
            entry.requests += row["requests"]
            entry.cache_hits += row["cache_hits"]
            entry.sent += row.get("sent", 0)  # stages saved before sends were counted have none
            entry.retries.update(row.get("retries", {}))
            entry.failures.update(row["failures"])
            entry.prompt_tokens += row["prompt_tokens"]
            entry.completion_tokens += row["completion_tokens"]
            entry.reasoning_tokens += row.get("reasoning_tokens", 0)  # stages saved before they were counted
            entry.latency_s += row["latency_s"]

    def since(self, earlier: list[dict]) -> list[dict]:
        """What was recorded after `earlier = self.export()` was taken."""
        before = {(row["stage"], row["model"]): row for row in earlier}
        rows = []
        for row in self.export():
            old = before.get((row["stage"], row["model"]))
            if old is not None:
                row = {
                    **row,
                    **{
                        key: row[key] - old[key]
                        for key in (
                            "requests",
                            "cache_hits",
                            "sent",
                            "prompt_tokens",
                            "completion_tokens",
                            "reasoning_tokens",
                            "latency_s",
                        )
                    },
                    "failures": dict(Counter(row["failures"]) - Counter(old["failures"])),
                    "retries": dict(Counter(row["retries"]) - Counter(old["retries"])),
                }
            if row["requests"]:
                rows.append(row)
        return rows

    def spent_tokens(self) -> int:
        return sum(entry.tokens for entry in self.totals.values())

    def spent_cost(self) -> float:
        return sum(
            self.prices.get(model, Price()).cost(entry.prompt_tokens, entry.completion_tokens)
            for (_, model), entry in self.totals.items()
        )

    def reserve(self, requests: list[ChatRequest], model: str) -> tuple[int, float] | None:
        """Hold the estimated spend of `requests`, or None (and mark the run exhausted) if the
        budget could be exceeded. Release the reservation once the answers are recorded."""
        prompt = completion = 0
        for request in requests:
            p, c = estimate_tokens(request)
            prompt, completion = prompt + p, completion + c
        tokens, cost = prompt + completion, self.prices.get(model, Price()).cost(prompt, completion)
        over_tokens = self.budget.max_tokens is not None and (
            self.spent_tokens() + self.reserved_tokens + tokens > self.budget.max_tokens
        )
        over_cost = self.budget.max_cost_usd is not None and (
            self.spent_cost() + self.reserved_cost + cost > self.budget.max_cost_usd
        )
        if over_tokens or over_cost:
            self.exhausted = True
            return None
        self.reserved_tokens += tokens
        self.reserved_cost += cost
        return tokens, cost

    def release(self, reservation: tuple[int, float]) -> None:
        self.reserved_tokens -= reservation[0]
        self.reserved_cost -= reservation[1]

    def summary(self) -> dict:
        hits = sum(entry.cache_hits for entry in self.totals.values())
        requests = sum(entry.requests for entry in self.totals.values())
        failures, retries = Counter(), Counter()
        for entry in self.totals.values():
            failures.update(entry.failures)
            retries.update(entry.retries)
        completion = sum(entry.completion_tokens for entry in self.totals.values())
        return {
            "llm_requests": requests,
            "llm_cache_hits": hits,
            "llm_cache_misses": requests - hits - sum(failures.values()),
            "llm_failures": dict(failures),
            "llm_sent": sum(entry.sent for entry in self.totals.values()),
            "llm_retries": dict(retries),
            "prompt_tokens": sum(entry.prompt_tokens for entry in self.totals.values()),
            "completion_tokens": completion,
            "reasoning_tokens": sum(entry.reasoning_tokens for entry in self.totals.values()),
            "estimated_cost_usd": round(self.spent_cost(), 6) if self.prices else None,
            "budget_exhausted": self.exhausted,
            "by_stage_model": {
                f"{stage}/{model}": {
                    "requests": entry.requests,
                    "cache_hits": entry.cache_hits,
                    "sent": entry.sent,
                    "retries": dict(entry.retries),
                    "failures": dict(entry.failures),
                    "prompt_tokens": entry.prompt_tokens,
                    "completion_tokens": entry.completion_tokens,
                    "reasoning_tokens": entry.reasoning_tokens,
                    "mean_latency_s": round(entry.latency_s / answered, 3)
                    if (answered := entry.requests - entry.cache_hits - sum(entry.failures.values()))
                    else None,
                }
                for (stage, model), entry in sorted(self.totals.items())
            },
        }


_STAGE_LEDGER: ContextVar[Ledger | None] = ContextVar("synth_stage_ledger", default=None)
"""The ledger of the run stage whose code is running here (see `Ledger.stage`)."""

"""The client every stage talks to: cache, budget and accounting around one backend.

Cache hits cost nothing and are counted. Each miss goes to the backend as its own request, all of
them at once (the backend batches or limits them), and each answer is stored the moment it
arrives, so a run killed midway re-sends only the requests that had no answer yet. Failures are
never cached: the next run retries them.

Every request is first fitted to the model's reasoning (`synth.llm.reasoning`): callers write
requests for the answer alone, and a model that reasons gets room to think and no stop strings.
`reasoning: auto` is settled by one cached probe before the model's first request.
"""

import asyncio
import logging
from collections.abc import Sequence

from synth.llm.accounting import Ledger
from synth.llm.base import BudgetProfile, LLMBackend
from synth.llm.cache import ResponseCache, cache_key
from synth.llm.reasoning import PROBE_PROMPT
from synth.llm.responses import TRUNCATED_REASONING
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure, SamplingParams, is_model_failure

Result = ChatResponse | LLMFailure
PROBE_TOKENS = 256
log = logging.getLogger("synth.llm.client")


class LLMClient:
    def __init__(self, backend: LLMBackend, cache: ResponseCache | None = None, ledger: Ledger | None = None, log=None):
        self.backend = backend
        self.cache = cache
        self.ledger = ledger or Ledger()
        self.log = log or log_info
        self._reasons: bool | None = {"on": True, "off": False}.get(backend.reasoning.mode)
        self._probes: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}
        self._flights: dict[asyncio.AbstractEventLoop, dict[str, asyncio.Future]] = {}
        """Per event loop, the requests on their way to the model, by cache key (`_send_once`)."""
        self._warned_unexpected_reasoning = False

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    @property
    def budgets(self) -> BudgetProfile:
        """Which default agent budgets this model's roles get."""
        return self.backend.budgets

    def native_tool_calls(self) -> bool:
        return self.backend.native_tool_calls()

    async def reasons(self) -> bool | LLMFailure:
        """Whether the model reasons: as declared, or (`auto`) from one probe, asked once per run and
        cached like any request, so a rerun decides the same way without a call. While the probe
        fails, its failure (nothing is sent in a shape that might be wrong for the model)."""
        if self._reasons is None:
            lock = self._probes.setdefault(asyncio.get_running_loop(), asyncio.Lock())
            async with lock:
                if self._reasons is None:
                    found = await self._probe()
                    if isinstance(found, LLMFailure):
                        return found
                    self._reasons = found
        return self._reasons

    async def _probe(self) -> bool | LLMFailure:
        """One short request: a model that reasons starts its reply with reasoning, so PROBE_TOKENS
        show it (also when cut off) and fit the smallest served context."""
        policy = self.backend.reasoning
        probe = ChatRequest(
            messages=[{"role": "user", "content": PROBE_PROMPT}],
            sampling=SamplingParams(temperature=0.0, max_tokens=PROBE_TOKENS, seed=0),
            stage="reasoning_probe",
        )
        (answer,) = await self._complete_as_sent([probe])
        if isinstance(answer, LLMFailure) and not is_model_failure(answer.reason):
            self.log(
                f"{self.model_id}: the server refused the reasoning probe ({answer.reason}: {answer.detail[:200]}); "
                "requests are sent as built (declare `reasoning: on` if the model reasons)"
            )
            return False
        if not isinstance(answer, ChatResponse):
            return answer
        completion = answer.completions[0]
        reasons = bool(completion.reasoning) or completion.finish_reason == TRUNCATED_REASONING
        if reasons:
            self.log(
                f"{self.model_id}: reasons (reasoning: auto found it in its first reply); its requests get "
                f"{policy.tokens} more tokens (reasoning_tokens) and no stop strings, and earlier reasoning goes "
                f"back as {policy.history} (reasoning_history)"
            )
        else:
            self.log(f"{self.model_id}: no reasoning in its first reply (reasoning: auto); requests are sent as built")
        return reasons

    async def complete(self, requests: Sequence[ChatRequest]) -> list[Result]:
        """One result per request, in order; hits are marked `cached`."""
        reasons = await self.reasons()
        if isinstance(reasons, LLMFailure):  # `auto` could not ask the model yet: send nothing, retry later
            return [self._unsent(request, reasons) for request in requests]
        policy = self.backend.reasoning
        return await self._complete_as_sent([policy.prepare(request, reasons) for request in requests])

    def _unsent(self, request: ChatRequest, probe: LLMFailure) -> LLMFailure:
        failure = probe.model_copy(
            update={
                "attempts": 0,
                "retries": {},
                "detail": f"not sent: the reasoning probe (reasoning: auto) failed: {probe.detail}"[:500],
            }
        )
        self.ledger.record(request, self.backend.model_id, failure)
        return failure

    async def _complete_as_sent(self, requests: Sequence[ChatRequest]) -> list[Result]:
        model = self.backend.model_id
        keys = [cache_key(request, model) for request in requests]
        cached = self.cache.get_many(list(dict.fromkeys(keys))) if self.cache is not None else {}
        results: list[Result | None] = [
            cached[key].model_copy(update={"cached": True}) if key in cached else None for key in keys
        ]
        pending: dict[str, list[int]] = {}  # identical requests in one call are sent once
        for index, (key, result) in enumerate(zip(keys, results)):
            if result is None:
                pending.setdefault(key, []).append(index)
            else:
                self.ledger.record(requests[index], model, result)
        answers = await asyncio.gather(
            *(self._send_once(key, requests[indexes[0]], model) for key, indexes in pending.items())
        )
        for indexes, answer in zip(pending.values(), answers):
            results[indexes[0]] = answer
            for index in indexes[1:]:
                results[index] = (
                    answer.model_copy(update={"cached": True}) if isinstance(answer, ChatResponse) else answer
                )
                self.ledger.record(requests[index], model, answer)
        return results  # type: ignore[return-value]

    async def _send_once(self, key: str, request: ChatRequest, model: str) -> Result:
        """`_send`, unless the same request is already on its way for another caller (two agents in
        one state, a panel and a teacher asking alike): then its answer, counted as a cache hit. A
        request that waited for a slot behind its twin would otherwise be sent, and paid for, again."""
        flights = self._flights.setdefault(asyncio.get_running_loop(), {})
        flight = flights.get(key)
        if flight is not None:
            try:
                answer = await asyncio.shield(flight)
            except asyncio.CancelledError:
                if (task := asyncio.current_task()) is not None and task.cancelling():
                    raise  # this caller was cancelled, not its twin
                return await self._send_once(key, request, model)  # the twin's caller gave up: send it
            shared = answer.model_copy(update={"cached": True}) if isinstance(answer, ChatResponse) else answer
            self.ledger.record(request, model, shared)
            return shared
        flight = flights[key] = asyncio.get_running_loop().create_future()
        try:
            answer = await self._send(key, request, model)
        except BaseException:
            flight.cancel()
            raise
        finally:
            flights.pop(key, None)
        flight.set_result(answer)
        return answer

    async def _send(self, key: str, request: ChatRequest, model: str) -> Result:
        """One request: reserve its budget, send it, store and count its answer as soon as it arrives."""
        reservation = self.ledger.reserve([request], model)
        if reservation is None:
            answer: Result = LLMFailure(
                reason="budget_exceeded", attempts=0, detail="not sent: it could take the run past its budget"
            )
        else:
            try:
                (answer,) = await self.backend.complete([request])
            finally:
                self.ledger.release(reservation)
        if self.cache is not None and isinstance(answer, ChatResponse):
            self.cache.put(key, request.stage, answer)
        self.ledger.record(request, model, answer)
        if self._reasons is False and isinstance(answer, ChatResponse) and not self._warned_unexpected_reasoning:
            if any(completion.reasoning for completion in answer.completions):
                self._warned_unexpected_reasoning = True
                self.log(
                    f"{self.model_id} answered with reasoning, but its requests are built for a model that does not "
                    "reason (stop strings, no room to think): declare it with `reasoning: on`"
                )
        return answer

    async def aclose(self) -> None:
        await self.backend.aclose()


def log_info(message: str) -> None:
    log.info(message)

"""The client every stage talks to: cache, budget and accounting around one backend.

Cache hits cost nothing and are counted. Each miss goes to the backend as its own request, all of
them at once (the backend batches or limits them), and each answer is stored the moment it
arrives, so a run killed midway re-sends only the requests that had no answer yet. Failures are
never cached: the next run retries them.
"""

import asyncio
from collections.abc import Sequence

from synth.llm.accounting import Ledger
from synth.llm.base import LLMBackend
from synth.llm.cache import ResponseCache, cache_key
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure

Result = ChatResponse | LLMFailure


class LLMClient:
    def __init__(self, backend: LLMBackend, cache: ResponseCache | None = None, ledger: Ledger | None = None):
        self.backend = backend
        self.cache = cache
        self.ledger = ledger or Ledger()

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    def native_tool_calls(self) -> bool:
        return self.backend.native_tool_calls()

    async def complete(self, requests: Sequence[ChatRequest]) -> list[Result]:
        """One result per request, in order; hits are marked `cached`."""
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
            *(self._send(key, requests[indexes[0]], model) for key, indexes in pending.items())
        )
        for indexes, answer in zip(pending.values(), answers):
            results[indexes[0]] = answer
            for index in indexes[1:]:
                results[index] = (
                    answer.model_copy(update={"cached": True}) if isinstance(answer, ChatResponse) else answer
                )
                self.ledger.record(requests[index], model, results[index])
        return results  # type: ignore[return-value]

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
        return answer

    async def aclose(self) -> None:
        await self.backend.aclose()

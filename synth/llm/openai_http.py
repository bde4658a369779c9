"""OpenAI-compatible HTTP backend: `vllm serve`, SGLang, TGI, hosted APIs.

Built on aiohttp rather than the `openai` SDK, because synth needs control the SDK does not give:
one adaptive concurrency limit shared by all callers, a retry policy that distinguishes overload
from breakage, replicas with least-in-flight routing, and the raw body of every failed answer.
aiohttp rather than httpx because httpx's connection pool costs ~15 ms of CPU per request at 64 in
flight and reached 0.10 of the ideal rate there (benchmarks/bench_http_backend.py); aiohttp comes
with `datasets` anyway. Each request either comes back answered or as an
LLMFailure naming the last fault and the attempts spent; nothing raises out of `complete`.
"""

import asyncio
import email.utils
import json
import logging
import time
from typing import Any, Sequence

import aiohttp
from pydantic import SecretStr

from synth.llm.base import LLMBackend
from synth.llm.concurrency import AdaptiveLimiter, EndpointPool, backoff_delay
from synth.llm.toolcalls import parse_tool_calls
from synth.llm.types import ChatRequest, ChatResponse, Completion, LLMFailure
from synth.schemas import FunctionCall, ToolCall, Usage

log = logging.getLogger("synth.llm.http")

OVERLOAD_STATUSES = {429, 503}
"""The server asks for less load: cut concurrency, back off, retry."""
TRANSIENT_STATUSES = {408, 409, 425, 500, 502, 504, 520, 522, 524}
"""Worth another try at the same load."""
RAW_LIMIT = 2000
"""Characters of a failed body kept in the failure record."""


class _Fault(Exception):
    """One failed attempt: a reason for the record, whether to retry, and what to tell the limiter."""

    def __init__(self, reason: str, detail: str, *, retry: bool, overload: bool = False,
                 replica_down: bool = False, retry_after_s: float | None = None, raw: str | None = None):
        super().__init__(detail)
        self.reason, self.detail, self.retry, self.overload = reason, detail, retry, overload
        self.replica_down, self.retry_after_s, self.raw = replica_down, retry_after_s, raw


class OpenAICompatibleBackend(LLMBackend):
    def __init__(
        self,
        model: str,
        endpoints: Sequence[str],
        *,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        connect_timeout_s: float = 10.0,
        max_concurrency: int = 64,
        max_attempts: int = 6,
        backoff_base_s: float = 0.5,
        backoff_cap_s: float = 30.0,
    ):
        self.model = model
        self.pool = EndpointPool(list(endpoints))
        self.limiter = AdaptiveLimiter(max_concurrency)
        self.max_attempts = max_attempts
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self.retries: dict[str, int] = {}
        """Retried faults by reason, for the run summary."""
        self._api_key = SecretStr(api_key) if api_key else None  # masked in repr, vars and tracebacks
        self._timeout = aiohttp.ClientTimeout(total=timeout_s, connect=connect_timeout_s)
        self._sessions: dict[asyncio.AbstractEventLoop, aiohttp.ClientSession] = {}

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatibleBackend(model={self.model!r}, endpoints={[e.url for e in self.pool.endpoints]!r})"

    @property
    def model_id(self) -> str:
        return f"openai:{self.model}"

    def native_tool_calls(self) -> bool:
        """OpenAI-compatible servers take `tools` and return `tool_calls` (vLLM with its tool parser on)."""
        return True

    def _session(self) -> aiohttp.ClientSession:
        """One connection pool per event loop (a session must not cross loops)."""
        loop = asyncio.get_running_loop()
        if loop not in self._sessions:
            headers = {"Authorization": f"Bearer {self._api_key.get_secret_value()}"} if self._api_key else {}
            self._sessions[loop] = aiohttp.ClientSession(
                headers=headers, timeout=self._timeout, connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300)
            )
        return self._sessions[loop]

    async def complete(self, requests: Sequence[ChatRequest]) -> list[ChatResponse | LLMFailure]:
        return list(await asyncio.gather(*(self._complete_one(request) for request in requests)))

    async def _complete_one(self, request: ChatRequest) -> ChatResponse | LLMFailure:
        payload = self.payload(request)
        fault: _Fault | None = None
        for attempt in range(1, self.max_attempts + 1):
            if fault is not None:
                await asyncio.sleep(backoff_delay(attempt - 1, self.backoff_base_s, self.backoff_cap_s, fault.retry_after_s))
            try:
                return await self._attempt(payload)
            except _Fault as error:
                fault = error
            if not fault.retry:
                break
            self.retries[fault.reason] = self.retries.get(fault.reason, 0) + 1
            log.info("retrying %s after %s (attempt %d of %d)", self.model, fault.reason, attempt, self.max_attempts)
        assert fault is not None
        return LLMFailure(reason=fault.reason, detail=fault.detail[:500], attempts=attempt, raw=fault.raw)

    async def _attempt(self, payload: dict[str, Any]) -> ChatResponse:
        async with self.limiter:
            endpoint, wait = self.pool.pick()
            if wait > 0:
                await asyncio.sleep(wait)
            endpoint.in_flight += 1
            started = time.monotonic()
            try:
                response = await self._post(endpoint.url, payload)
            except _Fault as fault:
                if fault.overload:
                    self.limiter.on_overload(started)
                if fault.replica_down:
                    self.pool.failed(endpoint)
                raise
            finally:
                endpoint.in_flight -= 1
            self.pool.succeeded(endpoint)
            self.limiter.on_success()
            return response.model_copy(update={"latency_s": time.monotonic() - started})

    async def _post(self, base_url: str, payload: dict[str, Any]) -> ChatResponse:
        try:
            async with self._session().post(f"{base_url}/chat/completions", json=payload) as reply:
                status, retry_after = reply.status, reply.headers.get("Retry-After")
                body = (await reply.read()).decode("utf-8", errors="replace")
        except asyncio.TimeoutError:
            raise _Fault("timeout", f"no complete answer from {base_url} within {self._timeout.total} s", retry=True, overload=True) from None
        except aiohttp.ClientPayloadError as error:
            raise _Fault("truncated_response", f"body cut short by {base_url}: {error}", retry=True, replica_down=True) from None
        except aiohttp.ClientConnectorError as error:
            raise _Fault("connection_refused", f"cannot connect to {base_url}: {error}", retry=True, replica_down=True) from None
        except aiohttp.ClientError as error:  # disconnected, reset
            raise _Fault("connection_dropped", f"{type(error).__name__} from {base_url}: {error}", retry=True, replica_down=True) from None
        if status != 200:
            raise _Fault(
                f"http_{status}", f"HTTP {status} from {base_url}: {body[:200]}",
                retry=status in OVERLOAD_STATUSES or status in TRANSIENT_STATUSES,
                overload=status in OVERLOAD_STATUSES, replica_down=status >= 500 and status not in OVERLOAD_STATUSES,
                retry_after_s=_retry_after(retry_after), raw=body[:RAW_LIMIT],
            )
        try:
            return self.parse(json.loads(body))
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as error:
            raise _Fault("malformed_response", f"{type(error).__name__}: {error}"[:500], retry=True, raw=body[:RAW_LIMIT]) from None

    def payload(self, request: ChatRequest) -> dict[str, Any]:
        sampling = request.sampling
        payload: dict[str, Any] = {
            "model": self.model,
            "messages": request.messages,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "max_tokens": sampling.max_tokens,
            "n": sampling.n,
        }
        if sampling.seed is not None:
            payload["seed"] = sampling.seed
        if sampling.stop:
            payload["stop"] = sampling.stop
        if request.tools:
            payload["tools"] = request.tools
        if request.json_schema is not None:
            payload["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": str(request.json_schema.get("title", "reply")), "schema": request.json_schema},
            }
        return payload

    def parse(self, body: dict[str, Any]) -> ChatResponse:
        """An OpenAI chat.completion body; KeyError/TypeError/ValueError mean it is malformed."""
        choices = sorted(body["choices"], key=lambda choice: choice.get("index", 0))
        if not choices:
            raise ValueError("no choices in the response")
        completions = []
        for choice in choices:
            message = choice["message"]
            text = message.get("content")
            calls = [_tool_call(call, index) for index, call in enumerate(message.get("tool_calls") or [])]
            if not calls and text and "<tool_call>" in text:  # servers started without a tool parser
                text, calls = parse_tool_calls(text)
                text = text or None
            finish = choice.get("finish_reason")
            completions.append(Completion(text=text, tool_calls=calls, finish_reason="tool_calls" if calls else finish))
        usage = body.get("usage") or {}
        return ChatResponse(
            completions=completions,
            usage=Usage(prompt_tokens=usage.get("prompt_tokens") or 0, completion_tokens=usage.get("completion_tokens") or 0),
            model=self.model_id,
            raw=body,
        )

    async def aclose(self) -> None:
        """Close this loop's session; one left on a finished loop is dropped, its sockets freed with it."""
        sessions, self._sessions = self._sessions, {}
        session = sessions.get(asyncio.get_running_loop())
        if session is not None:
            await session.close()


def _tool_call(call: dict[str, Any], index: int) -> ToolCall:
    function = call["function"]
    arguments = function.get("arguments")
    if not isinstance(arguments, str):  # some servers send an object instead of a JSON string
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return ToolCall(id=call.get("id") or f"call_{index}", function=FunctionCall(name=function["name"], arguments=arguments))


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds, from either form the header takes (delta-seconds or an HTTP date)."""
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())

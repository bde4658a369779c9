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
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from pydantic import SecretStr

from synth.llm.base import LLMBackend
from synth.llm.concurrency import AdaptiveLimiter, CircuitBreaker, EndpointPool, backoff_delay
from synth.llm.hedging import MAX_HEDGES, HedgePolicy
from synth.llm.reasoning import ReasoningPolicy
from synth.llm.responses import read_message, reasoning_tokens
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure, is_model_failure
from synth.redact import redact
from synth.redact import register as register_secret
from synth.schemas import Usage

log = logging.getLogger("synth.llm.http")

OVERLOAD_STATUSES = {429, 503}
"""The server asks for less load: cut concurrency, back off, retry."""
TRANSIENT_STATUSES = {408, 409, 425, 500, 502, 504, 520, 522, 524}
"""Worth another try at the same load."""
RAW_LIMIT = 2000
"""Characters of a failed body kept in the failure record."""
JSON_HEADERS = {"Content-Type": "application/json"}
HEDGE_HEADERS = {**JSON_HEADERS, "X-Synth-Hedge": "1"}
"""A twin of an overdue attempt says so, for the server's logs and accounting (synth.llm.hedging)."""
CONTEXT_SIGNS = ("maximum context length", "context length", "too long", "max_model_len")
"""How servers word a 400 for a prompt longer than the model's context (vLLM, OpenAI, SGLang)."""
HEDGE_RECHECK_S = 0.5
"""While no answer has set the usual time, how often a waiting request looks again (synth.llm.hedging)."""
SLOW_AFTER_S = 30.0
"""A request waiting this long (or any retry) makes the backend report what it is waiting on."""


NOT_AGAINST_SERVER = ("http_429",)
"""Faults that do not open the circuit: an overload answer. A hang does (a server hanging on every call
then costs about a minute, not max_attempts x timeout_s per request), but it cuts no concurrency."""


class _Fault(Exception):
    """One failed attempt: a reason for the record, whether to retry, and what to tell the limiter."""

    def __init__(
        self,
        reason: str,
        detail: str,
        *,
        retry: bool,
        overload: bool = False,
        replica_down: bool = False,
        retry_after_s: float | None = None,
        raw: str | None = None,
        endpoint: str | None = None,
    ):
        detail, raw = redact(detail), redact(raw) if raw else raw  # a server may echo the key back
        super().__init__(detail)
        self.reason, self.detail, self.retry, self.overload = reason, detail, retry, overload
        self.replica_down, self.retry_after_s, self.raw, self.endpoint = replica_down, retry_after_s, raw, endpoint

    @property
    def counts_against_server(self) -> bool:
        """Whether this fault says the server is broken (for the circuit breaker): not an
        overload answer, not a fault of the request itself."""
        return self.reason not in NOT_AGAINST_SERVER and is_model_failure(self.reason)


STRAGGLER_MIN_S = 0.5
STRAGGLERS_PER_SLOT = 4
"""Stragglers kept waiting at once, per slot of the ceiling: hung connections cost the client little."""


class _Slot:
    """One attempt's hold on the limiter, given back once: when the attempt ends, or earlier when it
    turns into a straggler (at most STRAGGLERS_PER_SLOT x `ceiling` at once, which bounds in flight)."""

    def __init__(self, backend: "OpenAICompatibleBackend"):
        self.backend, self.held, self.straggling = backend, True, False

    def leave(self) -> None:
        backend = self.backend
        if self.held and backend._stragglers < STRAGGLERS_PER_SLOT * backend.limiter.ceiling:
            self.held, self.straggling = False, True
            backend._stragglers += 1
            backend.limiter.release()

    def release(self) -> None:
        if self.straggling:
            self.backend._stragglers -= 1
            self.straggling = False
        if self.held:
            self.held = False
            self.backend.limiter.release()


@dataclass
class _Tries:
    """Attempts of one request that went on the wire (hedges included)."""

    sent: int = 0
    hedges: int = 0
    """Twins sent early (synth.llm.hedging), counted as retries of reason `hedge` in the run summary."""
    slots: list = field(default_factory=list)
    """The attempts' holds on the limiter: an attempt that is hedged gives its slot to its twin."""
    sent_at: float | None = None
    """When the newest attempt went on the wire (None while it waits for a slot: nothing to hedge yet)."""
    on_wire: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when the newest attempt goes on the wire."""


class _CircuitOpen(Exception):
    """The circuit breaker kept an attempt from being sent: retry after `wait_s`, or give up (None)."""

    def __init__(self, wait_s: float | None):
        super().__init__("circuit open")
        self.wait_s = wait_s


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
        max_retry_after_s: float = 60.0,
        breaker: CircuitBreaker | None = None,
        log=None,
        slow_after_s: float = SLOW_AFTER_S,
        reasoning: ReasoningPolicy = ReasoningPolicy(),
        hedge: bool = True,
    ):
        """`reasoning`: whether the model reasons and how its requests make room for that (auto: a
        probe decides, see `LLMClient.reasons`); `hedge`: send a twin of an attempt that is overdue
        (synth.llm.hedging)."""
        self.reasoning = reasoning
        self.hedging = HedgePolicy(enabled=hedge)
        self.model = model
        self.pool = EndpointPool(list(endpoints))
        self.limiter = AdaptiveLimiter(max_concurrency)
        self.max_attempts = max_attempts
        self.backoff_base_s = backoff_base_s
        self.backoff_cap_s = backoff_cap_s
        self.max_retry_after_s = max_retry_after_s
        self.breaker = breaker or CircuitBreaker()
        self.retries: dict[str, int] = {}
        """Retried faults by reason, for the run summary."""
        self.sent = 0
        """Attempts that went on the wire (what the server receives)."""
        self.log = log or log_warning
        self.slow_after_s = slow_after_s
        self._started: dict[int, float] = {}
        self._watchers: dict[asyncio.AbstractEventLoop, asyncio.Task] = {}
        self._capped_retry_after = False
        self._latency_s: float | None = None
        """Recent answer latency (moving average): what makes an attempt a straggler."""
        self._stragglers = 0
        self._api_key = SecretStr(api_key) if api_key else None  # masked in repr, vars and tracebacks
        register_secret(api_key)  # and in every message, should a server echo it
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
        self._watch()
        if len(requests) == 1:  # the caller stores the answer before another request can start
            return [await self._complete_one(requests[0])]
        return list(await asyncio.gather(*(self._complete_one(request) for request in requests)))

    async def _complete_one(self, request: ChatRequest) -> ChatResponse | LLMFailure:
        payload = self.payload(request)
        body = json.dumps(payload).encode()  # once, however many attempts
        fault: _Fault | None = None
        retries: dict[str, int] = {}
        tries = _Tries()
        token = id(payload)
        self._started[token] = time.monotonic()
        try:
            while True:
                outcome = await self._race(body, tries)
                if tries.hedges:
                    retries["hedge"] = retries.get("hedge", 0) + tries.hedges
                    self.retries["hedge"] = self.retries.get("hedge", 0) + tries.hedges
                    tries.hedges = 0
                if isinstance(outcome, _CircuitOpen):
                    if outcome.wait_s is None:
                        return self._unsent(tries.sent, retries)
                    await asyncio.sleep(outcome.wait_s)  # not an attempt: the request waits for a probe to get through
                    continue
                if not isinstance(outcome, _Fault):
                    response, latency = outcome
                    # one copy per answer: at 1,024 requests in flight every microsecond of the client shows
                    return response.model_copy(
                        update={"attempts": tries.sent, "retries": retries, "latency_s": latency}
                    )
                fault = outcome
                if not fault.retry or tries.sent >= self.max_attempts:
                    break
                retries[fault.reason] = retries.get(fault.reason, 0) + 1
                self.retries[fault.reason] = self.retries.get(fault.reason, 0) + 1
                log.info(
                    "retrying %s after %s (attempt %d of %d)", self.model, fault.reason, tries.sent, self.max_attempts
                )
                await asyncio.sleep(self._delay(tries.sent, fault))
        finally:
            self._started.pop(token, None)
        assert fault is not None
        return LLMFailure(
            reason=fault.reason,
            detail=fault.detail[:500],
            attempts=tries.sent,
            retries=retries,
            raw=fault.raw,
            endpoint=fault.endpoint,
        )

    async def _race(self, body: bytes, tries: "_Tries") -> "tuple[ChatResponse, float] | _Fault | _CircuitOpen":
        """One attempt, hedged (synth.llm.hedging): while every attempt out is unanswered past the
        policy's delay, an identical one is sent beside them (at most MAX_HEDGES); the first answer
        wins and the others are cancelled. A fault ends the race only once no attempt is still out:
        the last one's fault, or the open circuit that kept the first from being sent."""
        loop = asyncio.get_running_loop()
        tries.sent_at, tries.on_wire = None, asyncio.Event()
        attempts: list[asyncio.Task] = [loop.create_task(self._attempt(body, tries, JSON_HEADERS))]
        pending = set(attempts)
        last: _Fault | _CircuitOpen | None = None
        try:
            while pending:
                may_hedge = self.hedging.enabled and len(attempts) <= MAX_HEDGES and tries.sent < self.max_attempts
                delay = self.hedging.after_s(self._timeout.total) if may_hedge else None
                sent_at = tries.sent_at
                if not may_hedge:
                    done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                elif sent_at is None:  # the newest attempt waits for a slot: not overdue, it is queued
                    done = await _until_sent(pending, tries.on_wire)
                    pending -= done
                    if not done:
                        continue
                else:  # overdue at sent_at + delay; with no usual time yet, looked at again every HEDGE_RECHECK_S
                    timeout = HEDGE_RECHECK_S if delay is None else max(0.0, sent_at + delay - loop.time())
                    done, pending = await asyncio.wait(pending, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
                    if not done and delay is None:
                        continue
                if not done:  # every attempt out is overdue: a straggler now, it sends a twin in its place
                    for slot in tries.slots:
                        slot.leave()
                    self.hedging.sent += 1
                    tries.hedges += 1
                    tries.sent_at = None
                    tries.on_wire.clear()
                    attempts.append(loop.create_task(self._attempt(body, tries, HEDGE_HEADERS, twin=True)))
                    pending.add(attempts[-1])
                    continue
                for task in done:
                    error = task.exception()
                    if error is None:
                        self.hedging.outcome(attempts.index(task), len(attempts) - 1)
                        return task.result()
                    if not isinstance(error, (_Fault, _CircuitOpen)):
                        raise error
                    if isinstance(error, _Fault) or last is None:
                        last = error
            assert last is not None
            return last
        finally:
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
            for slot in tries.slots:
                slot.release()
            tries.slots.clear()

    def _delay(self, attempt: int, fault: "_Fault") -> float:
        """Backoff before the next attempt; a server's Retry-After is obeyed up to `max_retry_after_s`.
        A timed-out attempt already waited its whole timeout: it is retried at once."""
        if fault.reason == "timeout":
            return 0.0
        retry_after = fault.retry_after_s
        if retry_after is not None and retry_after > self.max_retry_after_s:
            if not self._capped_retry_after:
                self._capped_retry_after = True
                self.log(
                    f"{self.model_id}: server asked to wait {retry_after:.0f} s (Retry-After); waiting "
                    f"{self.max_retry_after_s:.0f} s instead (max_retry_after_s)"
                )
            retry_after = self.max_retry_after_s
        return min(
            backoff_delay(attempt, self.backoff_base_s, self.backoff_cap_s, retry_after),
            max(self.backoff_cap_s, self.max_retry_after_s),
        )

    def _unsent(self, sent: int, retries: dict[str, int]) -> LLMFailure:
        """The failure of a request the open circuit kept from being sent (again)."""
        breaker = self.breaker
        endpoints = ", ".join(endpoint.url for endpoint in self.pool.endpoints)
        return LLMFailure(
            reason=breaker.last_reason or "circuit_open",
            attempts=sent,
            retries=retries,
            endpoint=endpoints,
            detail=f"not sent: {breaker.failures_in_a_row} attempts in a row failed at {endpoints}, and no probe was "
            f"answered for {breaker.give_up_s:.0f} s; last: {breaker.last_detail}"[:500],
        )

    def _watch(self) -> None:
        """Start this loop's reporter of slow and retried requests, once; it also closes the
        loop's connection pool when the loop ends."""
        loop = asyncio.get_running_loop()
        task = self._watchers.get(loop)
        if task is None or task.done():
            self._watchers[loop] = loop.create_task(self._report_slow(self.slow_after_s))

    async def _report_slow(self, every_s: float) -> None:
        """Every `every_s`, while requests are slow or being retried, one line on what is waited for."""
        try:
            await self._watch_loop(every_s)
        finally:  # cancelled when its event loop ends (asyncio.run cancels what is left): close that loop's connections
            session = self._sessions.pop(asyncio.get_running_loop(), None)
            if session is not None:
                await session.close()

    async def _watch_loop(self, every_s: float) -> None:
        reported_retries = 0
        while True:
            await asyncio.sleep(every_s)
            now, retried = time.monotonic(), sum(self.retries.values())
            oldest = now - min(self._started.values()) if self._started else 0.0
            if oldest < every_s and retried == reported_retries:
                continue
            reasons = ", ".join(f"{reason} x{count}" for reason, count in sorted(self.retries.items())) or "none"
            state = (
                f"; circuit open after {self.breaker.failures_in_a_row} failures in a row"
                if self.breaker.opened_at
                else ""
            )
            self.log(
                f"{self.model_id} at {', '.join(e.url for e in self.pool.endpoints)}: {len(self._started)} requests "
                f"waiting, oldest {oldest:.0f} s; retries so far: {reasons}{state}"
            )
            reported_retries = retried

    async def _attempt(
        self, body: bytes, tries: "_Tries", headers: dict[str, str], twin: bool = False
    ) -> tuple[ChatResponse, float]:
        """One try: the answer and its latency. Cancelled (a twin answered first), it says nothing
        about the server. An answered try keeps its slot until the race hands the answer on (`_race`
        releases it), so the next request goes out only after the caller has stored this answer.
        A `twin` (a hedge) goes ahead of queued requests for a slot, and is not asked of the circuit
        breaker again: with the circuit open only the probe is out, and a hung probe is hedged too."""
        answered = False
        await self.limiter.acquire(first=twin)
        slot = _Slot(self)
        tries.slots.append(slot)
        try:
            # asked once a slot is free: the circuit may have opened while we queued
            wait_s = 0.0 if twin else self.breaker.admit()
            if wait_s != 0.0:
                raise _CircuitOpen(wait_s)
            self.breaker.sending()
            endpoint, wait = self.pool.pick()
            if wait > 0:
                await asyncio.sleep(wait)
            endpoint.in_flight += 1
            started = time.monotonic()
            self.sent += 1
            tries.sent += 1
            tries.sent_at = asyncio.get_running_loop().time()
            tries.on_wire.set()
            overdue = asyncio.get_running_loop().call_later(self._straggler_after_s(), slot.leave)
            try:
                response = await self._post(endpoint.url, body, headers)
            except _Fault as fault:
                fault.endpoint = endpoint.url
                if fault.reason == "timeout":
                    self.hedging.hung()
                if fault.counts_against_server:
                    self.breaker.failed(fault.reason, fault.detail)
                else:
                    self.breaker.released()
                if fault.overload:
                    self.limiter.on_overload(started)
                if fault.replica_down:
                    self.pool.failed(endpoint)
                raise
            except asyncio.CancelledError:
                self.breaker.released()
                raise
            finally:
                overdue.cancel()
                endpoint.in_flight -= 1
            latency = time.monotonic() - started
            self._latency_s = latency if self._latency_s is None else 0.8 * self._latency_s + 0.2 * latency
            self.hedging.answered(latency)
            self.pool.succeeded(endpoint)
            self.breaker.succeeded()
            self.limiter.on_success()
            answered = True
            return response, latency
        finally:
            if not answered:
                slot.release()

    def _straggler_after_s(self) -> float:
        """How long an attempt holds its concurrency slot before it counts as a straggler and gives
        the slot to the next request (it still waits for its answer, until the timeout): three times
        the recent latency, so only outliers leave, and a uniformly slow server keeps its limit."""
        typical = self._latency_s if self._latency_s is not None else (self._timeout.total or 60.0) / 4
        return max(STRAGGLER_MIN_S, 3.0 * typical)

    async def _post(self, base_url: str, body: bytes, headers: dict[str, str] = JSON_HEADERS) -> ChatResponse:
        try:
            async with self._session().post(f"{base_url}/chat/completions", data=body, headers=headers) as reply:
                status, retry_after = reply.status, reply.headers.get("Retry-After")
                text = (await reply.read()).decode("utf-8", errors="replace")
        except TimeoutError:  # a hang is not a 429: the others keep their slots, this one is retried
            raise _Fault(
                "timeout", f"no complete answer from {base_url} within {self._timeout.total} s", retry=True
            ) from None
        except aiohttp.ClientPayloadError as error:
            raise _Fault(
                "truncated_response", f"body cut short by {base_url}: {error}", retry=True, replica_down=True
            ) from None
        except aiohttp.ClientConnectorError as error:
            raise _Fault(
                "connection_refused", f"cannot connect to {base_url}: {error}", retry=True, replica_down=True
            ) from None
        except aiohttp.ClientError as error:  # disconnected, reset
            raise _Fault(
                "connection_dropped", f"{type(error).__name__} from {base_url}: {error}", retry=True, replica_down=True
            ) from None
        if status == 400 and any(sign in text.lower() for sign in CONTEXT_SIGNS):
            raise _Fault(
                "context_too_long", f"HTTP 400 from {base_url}: {text[:200]}", retry=False, raw=text[:RAW_LIMIT]
            )
        if status != 200:
            raise _Fault(
                f"http_{status}",
                f"HTTP {status} from {base_url}: {text[:200]}",
                retry=status in OVERLOAD_STATUSES or status in TRANSIENT_STATUSES,
                overload=status in OVERLOAD_STATUSES,
                replica_down=status >= 500 and status not in OVERLOAD_STATUSES,
                retry_after_s=_retry_after(retry_after),
                raw=text[:RAW_LIMIT],
            )
        try:
            return self.parse(json.loads(text))
        except (json.JSONDecodeError, KeyError, IndexError, TypeError, ValueError) as error:
            raise _Fault(
                "malformed_response", f"{type(error).__name__}: {error}"[:500], retry=True, raw=text[:RAW_LIMIT]
            ) from None

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
        """An OpenAI chat.completion body in any server's dialect (`synth.llm.responses`);
        KeyError/TypeError/ValueError mean it is malformed."""
        choices = sorted(body["choices"], key=lambda choice: choice.get("index", 0))
        if not choices:
            raise ValueError("no choices in the response")
        completions = [read_message(choice["message"], choice.get("finish_reason")) for choice in choices]
        usage = body.get("usage") or {}
        thought, estimated = reasoning_tokens(completions, usage)
        return ChatResponse(
            completions=completions,
            usage=Usage(
                prompt_tokens=usage.get("prompt_tokens") or 0, completion_tokens=usage.get("completion_tokens") or 0
            ),
            model=self.model_id,
            raw=body,
            reasoning_tokens=thought,
            reasoning_tokens_estimated=estimated,
        )

    async def aclose(self) -> None:
        """Close this loop's session (those of finished loops were closed as their loops ended)."""
        watchers, self._watchers = self._watchers, {}
        for task in watchers.values():
            task.cancel()
        session = self._sessions.pop(asyncio.get_running_loop(), None)
        if session is not None:
            await session.close()


async def _until_sent(pending: set[asyncio.Task], on_wire: asyncio.Event) -> set[asyncio.Task]:
    """Wait until an attempt of `pending` ends (returned) or `on_wire` is set (nothing returned)."""
    sent = asyncio.ensure_future(on_wire.wait())
    try:
        done, _ = await asyncio.wait({*pending, sent}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        sent.cancel()
    return done - {sent}


def log_warning(message: str) -> None:
    """Stalls and capped waits go to stderr even without a terminal or logging set up: a run that
    waits on a server must be visible in a CI log too."""
    log.info(message)
    print(f"synth: {message}", file=sys.stderr, flush=True)


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

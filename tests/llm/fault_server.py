"""An OpenAI-compatible chat server on loopback that injects faults on demand.

Written on raw asyncio streams, not a web framework, because the faults live below HTTP's
happy path: a body cut short, a reset connection, a reply that never comes. Also used by
benchmarks/bench_http_backend.py as the fixed-latency server (`python tests/llm/fault_server.py`).

Faults are queued with `inject(...)` and consumed one per request, in arrival order:
  429 / 500 / 503 / 400  that HTTP status (429 and 503 carry `Retry-After: 0`)
  timeout                no reply for `hang_s` seconds
  reset                  the connection is dropped before any reply
  truncated              a 200 whose body stops halfway (Content-Length promises more)
  truncated_json         a complete 200 whose JSON is cut in the middle
  malformed              a 200 with JSON that is not a chat completion
  html                   a 200 with an HTML error page
  empty_choices          a 200 chat completion with no choices
With `slow_every=N`, every N-th distinct request waits `slow_s` longer (a long tail the client's stragglers
come from). With `capacity` set, requests beyond that many in flight get 429, as an overloaded server does.
`always` answers every request with one fault; `fail_first=N` gives each distinct request that
fault on its first N tries only. `distinct` counts how often each distinct body arrived.
"""

import argparse
import asyncio
import json
import threading
from collections import Counter, deque

STATUS_TEXT = {
    200: "OK",
    400: "Bad Request",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


class FaultServer:
    def __init__(
        self,
        latency_s: float = 0.0,
        hang_s: float = 5.0,
        capacity: int | None = None,
        always: str | None = None,
        fail_first: int | None = None,
        retry_after: str = "0",
        reasoning_words: int = 0,
        reasoning_style: str = "field",
        slow_every: int = 0,
        slow_s: float = 0.0,
    ):
        """`reasoning_words`: every answer also carries that many words of reasoning, in the `reasoning`
        field (`reasoning_style` field, as vLLM sends it) or as <think> text before the content (inline)."""
        self.reasoning_words, self.reasoning_style = reasoning_words, reasoning_style
        self.always = always
        self.fail_first = fail_first
        self.retry_after = retry_after
        self.distinct: Counter[str] = Counter()
        self.hedges: Counter[str] = Counter()
        """Of `distinct`, the tries that came as a hedge (the client's twin of an overdue attempt)."""
        self.latency_s = latency_s
        self.slow_every, self.slow_s = slow_every, slow_s
        """A long tail: every `slow_every`-th distinct request waits `slow_s` more, each time it comes."""
        self._slow: set[str] = set()
        self.hang_s = hang_s
        self.capacity = capacity
        self.faults: deque[str] = deque()
        self.requests: list[dict] = []
        self.headers: list[dict[str, str]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.answered = 0
        self.answered_bodies: dict[str, str] = {}
        """Each answer's unique `id` -> the request body it answered (a cache's stored answer names its request)."""
        self.port: int | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.base_events.Server | None = None

    def sent_since(self, start: int = 0) -> int:
        """Requests received from the `start`-th on, hedges (the client's marked twins of overdue
        attempts, a deliberate second try) left out: how many calls a client made."""
        return sum(1 for headers in self.headers[start:] if not headers.get("x-synth-hedge"))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def inject(self, *faults: str) -> None:
        self.faults.extend(faults)

    # ---- running --------------------------------------------------------------------------------

    async def start(self, port: int = 0) -> None:
        self._loop = asyncio.get_running_loop()
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", port, backlog=1024)
        self.port = self._server.sockets[0].getsockname()[1]

    def start_in_thread(self) -> "FaultServer":
        """Serve from a daemon thread with its own event loop (for tests); returns self once listening."""
        ready = threading.Event()

        def serve() -> None:
            async def main() -> None:
                await self.start()
                ready.set()
                await asyncio.Event().wait()

            asyncio.run(main())

        threading.Thread(target=serve, daemon=True, name="fault-server").start()
        if not ready.wait(10):
            raise RuntimeError("fault server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._server is not None:
            self._loop.call_soon_threadsafe(self._server.close)

    # ---- HTTP -----------------------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                headers = {
                    name.strip().lower(): value.strip()
                    for name, value in (line.split(":", 1) for line in lines[1:] if ":" in line)
                }
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                if not await self._respond(writer, headers, body):
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()

    async def _respond(self, writer: asyncio.StreamWriter, headers: dict[str, str], body: bytes) -> bool:
        """Answer one request; False closes the connection."""
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            fault = self.faults.popleft() if self.faults else None
            if fault is None and self.capacity is not None and self.in_flight > self.capacity:
                fault = "429"
            self.distinct[body.decode()] += 1
            if headers.get("x-synth-hedge"):
                self.hedges[body.decode()] += 1
            if fault is None and self.always is not None:
                if self.fail_first is None or self.distinct[body.decode()] <= self.fail_first:
                    fault = self.always
            request = json.loads(body)
            self.requests.append(request)
            self.headers.append(headers)
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            if self.slow_every and self.distinct[body.decode()] == 1 and len(self.distinct) % self.slow_every == 0:
                self._slow.add(body.decode())
            if body.decode() in self._slow:  # its hedges and retries too: the request is slow, not the try
                await asyncio.sleep(self.slow_s)
            if fault == "timeout":
                await asyncio.sleep(self.hang_s)
                return False
            if fault == "reset":
                writer.transport.abort()
                return False
            if fault in ("429", "503"):
                self._send(
                    writer, int(fault), json.dumps({"error": {"message": "overloaded"}}), retry_after=self.retry_after
                )
            elif fault in ("400", "500"):
                self._send(writer, int(fault), json.dumps({"error": {"message": f"injected {fault}"}}))
            elif fault == "truncated":
                full = json.dumps(self.answer(request)).encode()
                writer.write(_head(200, len(full), "application/json") + full[: len(full) // 2])
                await writer.drain()
                return False
            elif fault == "truncated_json":
                text = json.dumps(self.answer(request))
                self._send(writer, 200, text[: len(text) // 2])
            elif fault == "malformed":
                self._send(writer, 200, json.dumps({"object": "chat.completion", "id": "x"}))
            elif fault == "empty_choices":
                self._send(writer, 200, json.dumps({**self.answer(request), "choices": []}))
            elif fault == "html":
                self._send(writer, 200, "<html><body>502 Bad Gateway</body></html>", content_type="text/html")
            else:
                # counted at the reply, not from `requests`: concurrent requests share that count after the sleep
                reply = {**self.answer(request), "id": f"chatcmpl-{self.answered + 1}"}
                self.answered_bodies[reply["id"]] = body.decode()
                self._send(writer, 200, json.dumps(reply))
                self.answered += 1
            await writer.drain()
            return True
        finally:
            self.in_flight -= 1

    def answer(self, request: dict) -> dict:
        """The chat completion body for a request that gets no fault (subclasses play other models)."""
        return completion(request, self.reasoning_words, self.reasoning_style)

    @staticmethod
    def _send(
        writer: asyncio.StreamWriter,
        status: int,
        text: str,
        content_type: str = "application/json",
        retry_after: str | None = None,
    ) -> None:
        data = text.encode()
        writer.write(_head(status, len(data), content_type, retry_after) + data)


def _head(status: int, length: int, content_type: str, retry_after: str | None = None) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {STATUS_TEXT.get(status, 'Status')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {length}",
        "Connection: keep-alive",
    ]
    if retry_after is not None:
        lines.append(f"Retry-After: {retry_after}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def completion(request: dict, reasoning_words: int = 0, reasoning_style: str = "field") -> dict:
    """A deterministic chat completion: echoes the last user message, or calls the first tool with it;
    with `reasoning_words`, after that much reasoning (see FaultServer)."""
    last = next((m.get("content") or "" for m in reversed(request["messages"]) if m["role"] == "user"), "")
    choices = []
    for index in range(request.get("n", 1)):
        if request.get("tools"):
            name = request["tools"][0]["function"]["name"]
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{index}",
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps({"query": last})},
                    }
                ],
            }
            finish = "tool_calls"
        elif request.get("response_format", {}).get("type") == "json_schema":
            message, finish = {"role": "assistant", "content": json.dumps({"answer": last})}, "stop"
        else:
            message, finish = {"role": "assistant", "content": f"reply to: {last}"}, "stop"
        if reasoning_words:
            thought = " ".join(f"step{word % 50}" for word in range(reasoning_words))
            if reasoning_style == "inline":
                message["content"] = f"<think>\n{thought}\n</think>\n\n{message['content'] or ''}"
            else:
                message["reasoning"] = thought
        choices.append({"index": index, "message": message, "finish_reason": finish})
    prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in request["messages"])
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": request.get("model"),
        "choices": choices,
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 3 * len(choices),
            "total_tokens": prompt_tokens + 3 * len(choices),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.1, help="seconds before each reply")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--reasoning-words", type=int, default=0, help="words of reasoning in every answer")
    parser.add_argument("--reasoning-style", choices=["field", "inline"], default="field")
    parser.add_argument("--always", help="one fault for every request (e.g. timeout)")
    parser.add_argument("--fail-first", type=int, help="with --always: each distinct request's first N tries only")
    parser.add_argument("--hang", type=float, default=5.0, help="seconds a `timeout` fault holds the request")
    arguments = parser.parse_args()

    async def serve() -> None:
        server = FaultServer(
            latency_s=arguments.latency,
            reasoning_words=arguments.reasoning_words,
            reasoning_style=arguments.reasoning_style,
            always=arguments.always,
            fail_first=arguments.fail_first,
            hang_s=arguments.hang,
        )
        await server.start(arguments.port)
        print(server.port, flush=True)
        await asyncio.Event().wait()

    try:  # the benchmark measures the client: give the server the faster event loop where it is installed
        import uvloop

        uvloop.run(serve())
    except ImportError:
        asyncio.run(serve())


if __name__ == "__main__":
    main()

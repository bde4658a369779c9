"""An HTTP proxy on loopback in front of the real S3 server that answers some requests itself with
503 SlowDown, the way S3 throttles a prefix that gets too many requests, and passes the rest on
unchanged (headers included, so the client's signature still holds). Not a mock of the S3 API:
every request it lets through is served by SeaweedFS."""

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

SLOW_DOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)


class ThrottlingProxy:
    """`throttle(n)`: the next n requests get 503 SlowDown; `always`: every request does."""

    def __init__(self, upstream: str):
        self.upstream = urlsplit(upstream)
        self.to_throttle, self.always = 0, False
        self.throttled = self.passed = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _handle(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if proxy._throttle_this():
                    self.send_response(503, "Slow Down")
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(SLOW_DOWN)))
                    self.end_headers()
                    self.wfile.write(SLOW_DOWN)
                    return
                upstream = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=60)
                try:
                    upstream.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
                    for name, value in self.headers.items():
                        upstream.putheader(name, value)
                    upstream.endheaders(body or None)
                    answer = upstream.getresponse()
                    data = answer.read()
                    self.send_response(answer.status, answer.reason)
                    for name, value in answer.getheaders():
                        if name.lower() not in ("transfer-encoding", "content-length", "connection"):
                            self.send_header(name, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                finally:
                    upstream.close()

            do_GET = do_PUT = do_POST = do_HEAD = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True, name="throttling-proxy").start()

    def throttle(self, requests: int) -> None:
        with self._lock:
            self.to_throttle = requests

    def _throttle_this(self) -> bool:
        with self._lock:
            if self.always or self.to_throttle > 0:
                self.to_throttle -= 1
                self.throttled += 1
                return True
            self.passed += 1
            return False

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

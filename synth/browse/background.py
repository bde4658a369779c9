"""`synth browse`'s app served from a thread of this process on a free loopback port, for as long
as a `with` block lasts: what the browser tests, the docs' screenshots and the benchmark look at
(`synth browse` itself serves in the foreground)."""

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from synth.browse.app import make_app
from synth.browse.data import PAGE_SIZE
from synth.settings import Settings


@contextmanager
def serving(settings: Settings, page_size: int = PAGE_SIZE, start_timeout_s: float = 20.0) -> Iterator[str]:
    """Serve the app over `settings`' data root; yields its URL, stops the server on exit."""
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(make_app(settings, page_size=page_size), host="127.0.0.1", port=port, log_level="error")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_timeout_s
    try:
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError(f"the browse server did not start on 127.0.0.1:{port}")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)

"""Fixtures of the browse tests: the store of browse_store.py, and `synth browse` serving it on a
free loopback port."""

import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from synth.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browse_store import make_store  # noqa: E402


@pytest.fixture
def store(tmp_path) -> Settings:
    settings = Settings(home=tmp_path)
    make_store(settings)
    return settings


@pytest.fixture
def served(store):
    """`synth browse`'s app on a free loopback port (page size 3), in a thread; yields its URL."""
    import uvicorn

    from synth.browse.app import make_app

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(make_app(store, page_size=3), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the browse server did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)

"""Inter-process locks (filelock: advisory OS locks the kernel drops when the holder dies, so a
SIGKILLed run never leaves a stale lock behind). filelock rather than fcntl by hand: the same
library `datasets` and `huggingface_hub` lock their caches with, portable to Windows."""

import os
import socket
import time
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock, Timeout


def holder(path: Path) -> str:
    """Who holds the lock at `path`, as its holder wrote it (pid@host), or "another process"."""
    try:
        return path.with_suffix(".owner").read_text().strip() or "another process"
    except OSError:
        return "another process"


def acquire(path: Path, timeout_s: float = 0.0, on_wait: Callable[[str], None] | None = None) -> FileLock | None:
    """The lock at `path`, or None if another process still holds it after `timeout_s`
    (`on_wait(holder)` is called once when the lock is busy)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        if on_wait is not None:
            on_wait(holder(path))
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                lock.acquire(timeout=min(1.0, max(0.0, deadline - time.monotonic())))
                break
            except Timeout:
                if time.monotonic() >= deadline:
                    return None
    path.with_suffix(".owner").write_text(f"{os.getpid()}@{socket.gethostname()}\n")
    return lock

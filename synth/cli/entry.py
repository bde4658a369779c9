"""The `synth` console script. It imports nothing before its handlers are in place, so Ctrl-C at any
moment (while the CLI's libraries load, in a query, while threads finish) is one line and exit 130."""

import os
import signal
import sys

from synth.errors import INTERRUPTED


def main() -> None:
    try:
        run = _loaded()
        run()
    except KeyboardInterrupt:
        interrupted()
    except RuntimeError as error:  # DuckDB's own Ctrl-C handler ends a query with this
        if str(error).strip() != "Query interrupted":
            raise
        interrupted()


def _loaded():
    """The CLI, imported with Ctrl-C noted rather than raised: raised inside an extension building a
    model (pydantic-core), it comes out as another error and a traceback. A Ctrl-C noted while
    loading interrupts as soon as loading ends."""
    pressed: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.default_int_handler:  # (an ignored Ctrl-C stays ignored)
        signal.signal(signal.SIGINT, lambda number, frame: pressed.append(number))
    try:
        from synth.cli.main import main as run
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        raise KeyboardInterrupt
    return run


def interrupted() -> None:
    """Say so in one line and leave now: a second Ctrl-C while worker threads are joined at exit
    would otherwise print the interpreter's traceback."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os.write(2, (INTERRUPTED + "\n").encode())
    os._exit(130)

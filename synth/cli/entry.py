"""The `synth` console script. It imports nothing before its handlers are in place, so Ctrl-C at any
moment (while the CLI's libraries load, in a query, while threads finish) is one line and exit 130."""

import os
import sys

from synth.errors import INTERRUPTED


def main() -> None:
    try:
        from synth.cli.main import main as run

        run()
    except KeyboardInterrupt:
        interrupted()
    except RuntimeError as error:  # DuckDB's own Ctrl-C handler ends a query with this
        if str(error).strip() != "Query interrupted":
            raise
        interrupted()


def interrupted() -> None:
    """Say so in one line and leave now: a second Ctrl-C while worker threads are joined at exit
    would otherwise print the interpreter's traceback."""
    try:
        sys.stdout.flush()
    except (OSError, ValueError):
        pass
    os.write(2, (INTERRUPTED + "\n").encode())
    os._exit(130)

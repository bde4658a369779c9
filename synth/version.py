"""The code version recorded on every dataset version: the release plus the git commit when known."""

import subprocess
from functools import cache
from pathlib import Path

from synth import __version__


@cache
def code_version() -> str:
    """`0.1.0+g1a2b3c4` in a git checkout (`.dirty` with uncommitted changes), else `0.1.0`."""
    source = Path(__file__).resolve().parent.parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(source), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(source), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return __version__
    return f"{__version__}+g{commit}{'.dirty' if dirty else ''}" if commit else __version__

"""`synth search serve` in its own process on a free port, for tests of agents searching remotely."""

import os
import re
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def search_server(home: Path, *world: str):
    """Yields the /retrieve URL of `synth search serve --port 0 *world`, with its caches under `home`."""
    env = {**os.environ, "SYNTH_HOME": str(home)}
    server = subprocess.Popen(
        [sys.executable, "-m", "synth.cli.main", "search", "serve", "--port", "0", *world],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline, url, seen = time.monotonic() + 120, None, []
        while url is None:
            line = server.stderr.readline()
            assert line or server.poll() is None, "synth search serve exited: " + "".join(seen)
            assert time.monotonic() < deadline, "synth search serve did not start: " + "".join(seen)
            seen.append(line)
            found = re.search(r"(http://\S+/retrieve)", line)
            url = found.group(1) if found else None
        yield url
    finally:
        server.terminate()
        server.wait(timeout=10)

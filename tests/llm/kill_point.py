"""Run `synth ARGS...` and SIGKILL this process at one named point, as a crash would.

Usage: python kill_point.py POINT N ARGS...

Points (N counts how often the point is passed before the kill; 1 is the first time):
  answer     after the N-th model answer is stored in the response cache (inside any stage)
  stage      after the N-th stage of the run is saved
  reserve    after the catalog reserved the version number (publish, step 1)
  staged     after the staging folder is complete, before it is renamed into place (step 2)
  renamed    after the rename, before the catalog marks the version published (step 3)
  committed  after the catalog commit, before the run folder is marked published (step 4)
  marked     after the run folder is marked published, before the run's row is recorded (step 5)
"""

import os
import signal
import sys

from synth.cli.main import main
from synth.llm.cache import ResponseCache
from synth.store import publish, workdir
from synth.store.catalog import Catalog

point, count, args = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
passed = 0


def after(owner, name: str, when=lambda *args, **kwargs: True):
    """Wrap owner.name so that the `count`-th call satisfying `when` is followed by SIGKILL."""
    original = getattr(owner, name)

    def wrapper(*args, **kwargs):
        global passed
        result = original(*args, **kwargs)
        if when(*args, **kwargs):
            passed += 1
            if passed == count:
                os.kill(os.getpid(), signal.SIGKILL)
        return result

    setattr(owner, name, wrapper)


if point == "answer":
    after(ResponseCache, "put")
elif point == "stage":
    after(workdir.RunDir, "save")
elif point == "reserve":
    after(Catalog, "reserve")
elif point == "staged":
    after(publish, "write_manifest")
elif point == "renamed":
    # the publish's staging folder only (.vN.partial-xxxx): other caches stage their folders the same way
    after(publish.os, "rename", lambda source, target: ".partial-" in str(source) and "datasets" in str(source))
elif point == "committed":
    after(Catalog, "mark_published")
elif point == "marked":
    after(workdir.RunDir, "update", lambda self, **fields: fields.get("status") == "published")
else:
    sys.exit(f"unknown kill point {point!r}")

main(args)

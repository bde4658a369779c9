"""Small helpers the benchmarks share: wall time and peak memory of a block."""

import resource
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path


def peak_rss_mib() -> float:
    """Peak resident memory of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@contextmanager
def timed(results: dict, key: str):
    started = time.perf_counter()
    yield
    results[key] = time.perf_counter() - started


@contextmanager
def scratch_settings():
    """Settings on a temporary data root (empty cache, so every call is paid) that reuses the
    converted embedded model of the usual data root instead of converting it again."""
    from synth.settings import Settings

    with tempfile.TemporaryDirectory() as home:
        models = Path(Settings().home) / "models"
        if models.exists():
            (Path(home) / "models").symlink_to(models.absolute())
        yield Settings(home=Path(home))

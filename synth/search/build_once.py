"""Build a cached folder once: staged, renamed into place, one builder at a time across processes.
A folder another data root built already is used from there, read-only, when that root's cache is
named in `SYNTH_SHARED_CACHE` (a team's prebuilt indexes; the test suite's bundled world)."""

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path


def build_once(
    folder: Path, build: Callable[[Path], None], log: Callable[[str], None], what: str, resumable: bool = False
) -> Path:
    """`folder`, built by `build` into a staging folder and renamed into place once. Processes
    that need the same index at once take turns on a lock: the first builds, the rest reuse it.
    A killed build's staging folder is removed, or, when `resumable`, handed to `build` to go on."""
    from filelock import FileLock

    if folder.is_dir():
        return folder
    shared = shared_copy(folder)
    if shared is not None:
        return shared
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(folder.with_name(f".{folder.name}.lock"))):
        if folder.is_dir():  # another process built it while we waited
            return folder
        staging = folder.with_name(f".{folder.name}.partial")
        if not resumable:
            shutil.rmtree(staging, ignore_errors=True)  # left by a killed build
        staging.mkdir(parents=True, exist_ok=True)
        started = time.perf_counter()
        log(f"building the {what} (once per corpus) ...")
        build(staging)
        staging.rename(folder)
        log(f"{what} built in {time.perf_counter() - started:.1f} s -> {folder}")
    return folder


SHARED_CACHE = "SYNTH_SHARED_CACHE"
"""Read-only cache folders of other data roots (`$THEIR_SYNTH_HOME/cache`), separated by `os.pathsep`."""


def shared_copy(folder: Path) -> Path | None:
    """`folder` (`<cache>/<kind>/<name>`) as a shared cache holds it (`<shared>/<kind>/<name>`), or None.
    Names carry the content's fingerprint, so a match is the same index."""
    for root in filter(None, os.environ.get(SHARED_CACHE, "").split(os.pathsep)):
        candidate = Path(root).expanduser() / folder.parent.name / folder.name
        if candidate.is_dir():
            return candidate
    return None

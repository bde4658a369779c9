"""Is a published version whole? Its parts checked against what publishing recorded.

Publishing writes `parts.json` beside the manifest: every part file of every table with its rows,
bytes and SHA-256. A version is damaged when a listed part is missing, has another size or (deep
check) another hash, is not readable Parquet, when a part is there that was never listed, or when
the rows in the parts differ from the manifest's counts (versions published before `parts.json`
are checked by counts alone). A damaged version is left out of the views and refused by
exports with one line naming the file; every other version keeps working.

The quick check (sizes, footers, counts, and each part's SHA-256) runs whenever a command reads
parts (a query builds its views, an export or a page reads a version, `datasets list`). A part's
hash is checked once per file state and the verified states are kept in `cache/verified_parts.json`
(publishing seeds it), so an unchanged part costs a stat. The state does not trust what a user can
set: besides size and mtime it holds the inode and the ctime, which the kernel sets on every write
and which no tool can set back (`touch -r`, `cp -p`, `rsync -t` and a restore keep the mtime, not
the ctime or inode), so a same-size rewrite is caught by the next command whatever its timestamps.
Damage no write makes (bit rot under the file system) is caught by a scrub: each check also re-reads
the parts verified longest ago, those not re-read for `SCRUB_AFTER_S`, up to `SCRUB_BYTES` per check.
"""

import json
import os
import sys
import time
import uuid
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from synth.hashing import file_hash
from synth.schemas import DatasetVersion
from synth.store.manifest import MANIFEST
from synth.store.tables import TABLES

PARTS = "parts.json"
PARTS_SINCE = datetime(2026, 11, 25, tzinfo=UTC)
"""Versions published since then have a parts.json; one without it lost it (older ones are checked by counts)."""
QUARANTINE = "quarantined.json"
"""Written by `synth datasets verify` into a version folder it found damaged (a same-size rewrite only
the hash sees): the quick check then leaves the version out too, until verify finds it whole."""
_warned: set[tuple[str, str]] = set()
VERIFIED = Path("cache") / "verified_parts.json"
SCRUB_AFTER_S = 24 * 3600.0
"""A part verified longer ago than this is re-read by a later check, whatever its state says."""
SCRUB_BYTES = 64 << 20
"""Bytes one check re-reads at most for the scrub (about 40 ms at this machine's 1.7 GB/s SHA-256)."""
_VERIFIED: dict[Path, dict[str, list]] = {}
_DIRTY: set[Path] = set()
"""Data roots with newly verified states not yet written."""


def part_entries(folder: Path) -> dict[str, list[dict]]:
    """What `parts.json` records for the version folder `folder` (tables written there)."""
    entries = {}
    for table in TABLES:
        entries[table] = [
            {
                "file": part.name,
                "rows": _footer_rows(str(part), *_identity(part)),
                "bytes": part.stat().st_size,
                "sha256": file_hash(part),
            }
            for part in sorted((folder / table).glob("*.parquet"))
        ]
    return entries


def write_parts(folder: Path) -> None:
    (folder / PARTS).write_text(json.dumps(part_entries(folder), indent=1, sort_keys=True) + "\n")


def _identity(path: Path) -> list[int]:
    """What a file state is keyed on: size, mtime, ctime and inode (see the module docstring)."""
    status = path.stat()
    return [status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino]


@lru_cache(maxsize=65_536)
def _footer_rows(path: str, size: int, mtime_ns: int, ctime_ns: int, inode: int) -> int | str:
    """Rows in a Parquet file per its footer, or why it cannot be read (cached per file state)."""
    import pyarrow.parquet as pq

    try:
        return pq.read_metadata(path).num_rows
    except Exception as error:  # pyarrow raises ArrowInvalid, OSError, ... for a damaged file
        return f"not readable Parquet ({str(error).splitlines()[0][:120]})"


def problems(home: Path, version: DatasetVersion, deep: bool = False) -> list[str]:
    """What is wrong with `version`'s files (empty when it is whole); `deep` also hashes every part."""
    folder = home / version.path
    if not folder.is_dir():
        return [f"{version.path}: folder missing"]
    scrub = _Scrub(SCRUB_BYTES)
    if not deep and (folder / QUARANTINE).is_file():
        found = _quarantined(folder)
        return [f"quarantined by `synth datasets verify`: {found[0] if found else 'damaged'}", *found[1:]]
    recorded = _recorded(folder)
    found: list[str] = []
    if not (folder / MANIFEST).is_file():
        found.append(f"{version.path}/{MANIFEST}: missing (the record a lost catalog is rebuilt from)")
    if recorded is None and version.created_at >= PARTS_SINCE:
        found.append(f"{version.path}/{PARTS}: missing or unreadable, so its parts cannot be checked")
    for table in TABLES:
        if table not in version.row_counts and recorded is None:
            continue  # a table newer than the version
        files = {part.name: part for part in (folder / table).glob("*.parquet")}
        listed = {entry["file"]: entry for entry in (recorded or {}).get(table, [])}
        if recorded is not None:
            found += [f"{table}/{name}: missing" for name in sorted(set(listed) - set(files))]
            found += [f"{table}/{name}: extra part, not in {PARTS}" for name in sorted(set(files) - set(listed))]
        rows = 0
        for name, part in sorted(files.items()):
            entry = listed.get(name)
            identity = _identity(part)
            size = identity[0]
            if entry is not None and entry["bytes"] != size:
                found.append(f"{table}/{name}: {size} bytes, {entry['bytes']} when published (truncated or rewritten)")
                continue
            count = _footer_rows(str(part), *identity)
            if isinstance(count, str):
                found.append(f"{table}/{name}: {count}")
                continue
            if entry is not None and not _hash_matches(home, part, identity, entry["sha256"], deep, scrub):
                found.append(f"{table}/{name}: content differs from when it was published (SHA-256)")
            rows += count
        expected = version.row_counts.get(table)
        if expected is not None and rows != expected and not any(problem.startswith(f"{table}/") for problem in found):
            found.append(f"{table}: {rows} rows in the parts, {expected} in the manifest (a part missing or added)")
    if home in _DIRTY:
        _DIRTY.discard(home)
        _save_verified(home)
    return found


def _verified(home: Path) -> dict[str, list]:
    """Part (relative path) -> [size, mtime_ns, ctime_ns, inode, sha256, verified at] of the states
    whose hash was checked."""
    cached = _VERIFIED.get(home)
    if cached is None:
        try:
            cached = json.loads((home / VERIFIED).read_text())
        except (OSError, ValueError):
            cached = {}
        _VERIFIED[home] = cached if isinstance(cached, dict) else {}
    return _VERIFIED[home]


class _Scrub:
    """The bytes one check may still re-read for parts whose verification is old."""

    def __init__(self, budget: int):
        self.left = budget

    def takes(self, size: int) -> bool:
        if size > self.left:
            return False
        self.left -= size
        return True


def _hash_matches(home: Path, part: Path, identity: list[int], sha256: str, deep: bool, scrub: _Scrub) -> bool:
    """Whether `part` still has the hash it was published with: read once per file state (always
    when `deep`, and again once its verification is older than SCRUB_AFTER_S and the scrub has
    room), then remembered."""
    key = str(part.relative_to(home)) if part.is_relative_to(home) else str(part)
    verified = _verified(home)
    known = verified.get(key)
    if not deep and isinstance(known, list) and known[:5] == [*identity, sha256]:
        fresh = time.time() - known[5] < SCRUB_AFTER_S if len(known) > 5 else False
        if fresh or not scrub.takes(identity[0]):
            return True
    if file_hash(part) != sha256:
        return False
    verified[key] = [*identity, sha256, time.time()]
    _DIRTY.add(home)
    return True


def remember(home: Path, version: DatasetVersion) -> None:
    """Record the parts of a version just published as verified (their hashes were just computed)."""
    folder = home / version.path
    recorded = _recorded(folder) or {}
    verified = _verified(home)
    for table, entries in recorded.items():
        for entry in entries:
            part = folder / table / entry["file"]
            if part.is_file():
                identity = _identity(part)
                if identity[0] == entry["bytes"]:
                    verified[str(part.relative_to(home))] = [*identity, entry["sha256"], time.time()]
    _save_verified(home)


def _save_verified(home: Path) -> None:
    """Write the verified states atomically; a lost race costs a re-hash later, never a wrong answer."""
    path = home / VERIFIED
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
        temporary.write_text(json.dumps(_VERIFIED.get(home, {})))
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only data root: the check still runs, it is only not remembered


def quarantine(home: Path, version: DatasetVersion, found: list[str]) -> None:
    """Mark `version` damaged for every later quick check (deep problems `found`), or lift the mark
    once a deep check finds it whole again (its files restored)."""
    marker = home / version.path / QUARANTINE
    if found:
        marker.write_text(json.dumps({"problems": found}, indent=1) + "\n")
    else:
        marker.unlink(missing_ok=True)


def _quarantined(folder: Path) -> list[str]:
    try:
        return list(json.loads((folder / QUARANTINE).read_text())["problems"])
    except (OSError, ValueError, KeyError, TypeError):
        return []


def _recorded(folder: Path) -> dict | None:
    try:
        return json.loads((folder / PARTS).read_text())
    except (OSError, ValueError):
        return None


def healthy(home: Path, versions: list[DatasetVersion]) -> list[DatasetVersion]:
    """The versions whose files are whole; each damaged one is reported once per process."""
    whole = []
    for version in versions:
        found = problems(home, version)
        if not found:
            whole.append(version)
            continue
        key = (str(home), version.ref)
        if key not in _warned:
            _warned.add(key)
            more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
            print(
                f"warning: {version.ref} is damaged: {found[0]}{more}; it is left out of queries and exports "
                f"(`synth datasets verify {version.ref}`)",
                file=sys.stderr,
            )
    return whole

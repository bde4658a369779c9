"""Is a published version whole? Its parts checked against what publishing recorded.

Publishing writes `parts.json` beside the manifest: every part file of every table with its rows,
bytes and SHA-256. A version is damaged when a listed part is missing, has another size or (deep
check) another hash, is not readable Parquet, when a part is there that was never listed, or when
the rows in the parts differ from the manifest's counts (versions published before `parts.json`
are checked by counts alone). A damaged version is left out of the views and refused by
exports with one line naming the file; every other version keeps working.

The quick check (sizes, footers, counts, and each part's SHA-256) runs whenever the views are
built. A part's hash is checked once per file state (path, size, mtime) and the verified states are
kept in `cache/verified_parts.json` (publishing seeds it), so a rewrite of the same size inside a
page is caught by the next command, and an unchanged part costs a stat.
"""

import json
import os
import sys
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
                "rows": _footer_rows(str(part), *_state(part)),
                "bytes": part.stat().st_size,
                "sha256": file_hash(part),
            }
            for part in sorted((folder / table).glob("*.parquet"))
        ]
    return entries


def write_parts(folder: Path) -> None:
    (folder / PARTS).write_text(json.dumps(part_entries(folder), indent=1, sort_keys=True) + "\n")


def _state(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_size, status.st_mtime_ns


@lru_cache(maxsize=65_536)
def _footer_rows(path: str, size: int, mtime_ns: int) -> int | str:
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
            size, mtime = _state(part)
            if entry is not None and entry["bytes"] != size:
                found.append(f"{table}/{name}: {size} bytes, {entry['bytes']} when published (truncated or rewritten)")
                continue
            count = _footer_rows(str(part), size, mtime)
            if isinstance(count, str):
                found.append(f"{table}/{name}: {count}")
                continue
            if entry is not None and not _hash_matches(home, part, entry["sha256"], size, mtime, deep):
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
    """Part (relative path) -> [size, mtime_ns, sha256] of the states whose hash was checked."""
    cached = _VERIFIED.get(home)
    if cached is None:
        try:
            cached = json.loads((home / VERIFIED).read_text())
        except (OSError, ValueError):
            cached = {}
        _VERIFIED[home] = cached if isinstance(cached, dict) else {}
    return _VERIFIED[home]


def _hash_matches(home: Path, part: Path, sha256: str, size: int, mtime: int, deep: bool) -> bool:
    """Whether `part` still has the hash it was published with: read once per file state (always
    when `deep`), then remembered."""
    key = str(part.relative_to(home)) if part.is_relative_to(home) else str(part)
    verified = _verified(home)
    if not deep and verified.get(key) == [size, mtime, sha256]:
        return True
    if file_hash(part) != sha256:
        return False
    verified[key] = [size, mtime, sha256]
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
                size, mtime = _state(part)
                if size == entry["bytes"]:
                    verified[str(part.relative_to(home))] = [size, mtime, entry["sha256"]]
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

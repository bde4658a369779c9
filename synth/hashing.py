"""Stable content hashes, used for item ids, config hashes, cache keys and file checksums."""

import hashlib
import json
from pathlib import Path
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values always give equal text."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(value: Any, length: int = 16) -> str:
    """Hex sha256 of the canonical JSON of `value`, truncated to `length` characters."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()[:length]


def file_hash(path: Path) -> str:
    """Hex sha256 of a file's bytes, read a megabyte at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def item_seed(item: Any, salt: str) -> int:
    """A sampling seed fixed by an item's id and what it is for (`salt`): the same attempt of the
    same item draws alike in every run, so its cached request is found again."""
    return int(content_hash({"item": item.id, "salt": salt}, length=8), 16)

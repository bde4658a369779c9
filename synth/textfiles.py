"""Reading a user's text file (plain or .gz) line by line, with every way it can be wrong turned
into one line naming the file, the line and the fix: binary content, a `.gz` that is not gzip,
gzip data cut short, a line too long to be a record (a one-line 50 MB file), a missing file.

Every importer (graphs, datasets, contamination benchmarks) reads through here, so they fail
alike. Lines are read as bytes with a length cap and decoded one at a time: a binary or
one-line file is refused at its first line, without reading it whole into memory.
"""

import gzip
import json
import zlib
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from synth.errors import InputFileError, NotFoundError

MAX_LINE_BYTES = 16 * 1024 * 1024
"""Longest line taken as one record; longer means the file is not line-oriented."""
GZIP_MAGIC = b"\x1f\x8b"


def require_file(path: Path, what: str = "file") -> Path:
    """`path` if it is a regular file; else one line saying what it is instead (missing, a folder,
    a device or pipe that would be read without end)."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.exists():
        raise NotFoundError(f"{what} {path} does not exist; check the path")
    kind = "a directory" if path.is_dir() else _special_kind(path)
    raise InputFileError(f"{what} {path} is {kind}, not a regular file; give the path of a file")


def _special_kind(path: Path) -> str:
    import stat

    mode = path.stat().st_mode
    for test, name in (
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a named pipe"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return name
    return "a special file"


def decode_utf8(path: Path, raw: bytes, first_line: int = 1) -> str:
    """`raw` (bytes of `path` starting at line `first_line`) as text, or one line naming the line and byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = first_line + raw[: error.start].count(b"\n")
        raise InputFileError(
            f"{path} line {line}: not UTF-8 text (byte 0x{raw[error.start]:02x}); "
            "is it a binary file? save or convert it as UTF-8 text"
        ) from None


def _open_binary(path: Path):
    require_file(path)
    if path.suffix.lower() == ".gz":
        with open(path, "rb") as probe:
            if probe.read(2) != GZIP_MAGIC:
                raise InputFileError(
                    f"{path}: named .gz but not gzip-compressed; drop the .gz suffix or compress it with gzip"
                )
        return gzip.open(path, "rb")
    return open(path, "rb")


def _lines(path: Path) -> Generator[str]:
    number = 0
    with _open_binary(path) as handle:
        while True:
            number += 1
            try:
                raw = handle.readline(MAX_LINE_BYTES + 1)
            except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as error:
                raise InputFileError(
                    f"{path}: the gzip data is damaged near line {number} ({error}); recompress the file"
                ) from None
            if not raw:
                return
            if len(raw) > MAX_LINE_BYTES:
                raise InputFileError(
                    f"{path} line {number}: longer than {MAX_LINE_BYTES // 2**20} MiB; this reader "
                    "takes one record per line (is it a single-line JSON file? convert it to JSON Lines)"
                )
            yield decode_utf8(path, raw, number)


@contextmanager
def text_lines(path: Path) -> Iterator[Generator[str]]:
    """The file's lines (with their line endings), checked as they are read."""
    lines = _lines(path)
    try:
        yield lines
    finally:
        lines.close()


def read_json_document(path: Path, max_bytes: int = 1024 * 2**20) -> Any:
    """A whole JSON file (not JSON Lines), with damage named in one line."""
    require_file(path)
    if path.stat().st_size > max_bytes:
        raise InputFileError(
            f"{path}: {path.stat().st_size // 2**20} MiB is too large to read as one JSON document; "
            "convert it to JSON Lines (.jsonl)"
        )
    text = decode_utf8(path, path.read_bytes())
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputFileError(
            f"{path}: not valid JSON ({error.msg} at line {error.lineno}); JSON Lines files need the .jsonl suffix"
        ) from None
    except RecursionError:
        raise InputFileError(f"{path}: JSON nested too deeply to read") from None

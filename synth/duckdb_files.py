"""DuckDB files synth writes (the catalog, imported graphs) in a storage format every current DuckDB
reads: the DuckDB 2.x Python package writes storage version 69 by default, which the newest DuckDB
CLI on the package index (1.5.x) cannot open, so a user browsing the catalog with the CLI would be
locked out. A file keeps the format it was created with."""

from pathlib import Path

STORAGE_COMPATIBILITY = "v1.0.0"
"""The oldest DuckDB release whose readers must open synth's files (every 1.x CLI and library)."""


def connect(path: Path | str, read_only: bool = False):
    """A connection to the DuckDB file `path`; a file created here is written for `STORAGE_COMPATIBILITY`."""
    import duckdb

    if read_only or Path(path).exists():
        return duckdb.connect(str(path), read_only=read_only)
    return duckdb.connect(str(path), config={"storage_compatibility_version": STORAGE_COMPATIBILITY})

"""A version folder's `manifest.json`: the version's row as published, the source of truth the
catalog index is rebuilt from."""

import json
import os
from pathlib import Path

from synth.schemas import DatasetVersion

MANIFEST = "manifest.json"


def read_manifest(folder: Path) -> DatasetVersion:
    return DatasetVersion.model_validate_json((folder / MANIFEST).read_text())


def write_manifest(folder: Path, version: DatasetVersion) -> None:
    """Write `folder`'s manifest and flush it to disk (a folder renamed into place holds it whole)."""
    path = folder / MANIFEST
    path.write_text(json.dumps(version.model_dump(mode="json"), indent=2, sort_keys=True) + "\n")
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())

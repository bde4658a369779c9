"""A version folder's `manifest.json`: the version's row as published, the source of truth the
catalog index is rebuilt from."""

from pathlib import Path

from synth.schemas import DatasetVersion

MANIFEST = "manifest.json"


def read_manifest(folder: Path) -> DatasetVersion:
    return DatasetVersion.model_validate_json((folder / MANIFEST).read_text())

"""synth: versioned, difficulty-labeled training data for search- and tool-using LLM agents."""

import importlib.abc
import importlib.util
import sys
from pathlib import Path

__version__ = "0.1.0"

DESIGN_FOLDERS = ("schemas", "generators", "filters", "pipelines", "data")
"""Top-level folders of a checkout that an install maps into `synth` (pyproject's package-dir)."""


class _CheckoutFolders(importlib.abc.MetaPathFinder):
    """Finds `synth.pipelines` and the other design folders in the checkout this `synth` folder sits in,
    for when the checkout's own `synth/` is imported (a command run from its root after a regular
    install, or no install at all): an install maps them, a bare folder cannot."""

    def __init__(self, root: Path):
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        prefix, _, name = fullname.partition(".")
        if prefix != __name__ or name not in DESIGN_FOLDERS:
            return None
        folder = self.root / name
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


def _map_checkout_folders() -> None:
    """Installs `_CheckoutFolders` last on the import path where this package is a checkout's folder."""
    here = Path(__file__).resolve().parent
    root = here.parent
    if (here / "pipelines").is_dir() or not (root / "pipelines" / "__init__.py").is_file():
        return  # an installed package: its subpackages are beside this file
    if not any(isinstance(finder, _CheckoutFolders) for finder in sys.meta_path):
        sys.meta_path.append(_CheckoutFolders(root))


_map_checkout_folders()

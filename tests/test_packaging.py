"""The install ships every package and the bundled data, for `pip install .` as well as editable installs."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_python_package_folder_is_declared_in_pyproject():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    declared = set(config["packages"])
    folders = {
        "synth": ROOT / "synth",
        **{
            f"synth.{name}": ROOT / path
            for name, path in ((key.removeprefix("synth."), value) for key, value in config["package-dir"].items())
        },
    }
    found = set()
    for package, folder in folders.items():
        for init in folder.rglob("__init__.py"):
            relative = init.parent.relative_to(folder)
            found.add(".".join([package, *relative.parts]))
    assert found == declared


def test_bundled_data_matches_the_package_data_globs():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    patterns = config["package-data"]["synth.data"]
    shipped = {path for pattern in patterns for path in (ROOT / "data").glob(pattern)}
    bundled = {path for path in (ROOT / "data").rglob("*") if path.is_file() and path.suffix != ".py"}
    assert bundled == shipped

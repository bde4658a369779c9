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


def test_the_checkouts_own_synth_folder_finds_the_design_folders_an_install_maps():
    """After a regular install, a command run from the checkout's root imports the checkout's `synth/`
    (it shadows the installed one), which must still find `synth.pipelines` and the other folders the
    install maps: the benchmarks and examples run from the checkout with either install."""
    import subprocess
    import sys

    import synth

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert {key.removeprefix("synth.") for key in config["package-dir"]} == set(synth.DESIGN_FOLDERS)
    code = (
        "import sys\n"  # as without an editable install: no finder maps the folders
        "sys.meta_path = [f for f in sys.meta_path if 'editable' not in type(f).__module__.lower()]\n"
        "sys.path_hooks[:] = [h for h in sys.path_hooks if 'editable' not in getattr(h, '__module__', '').lower()]\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import synth, synth.pipelines, synth.schemas, synth.filters, synth.generators\n"
        "from importlib import resources\n"
        "print(synth.__file__, resources.files('synth.data').joinpath('fb15k237').is_dir())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT.parent, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(ROOT / "synth" / "__init__.py"), "True"]

"""Type-check synth with basedpyright (pyright's checker; its wheel carries its Node runtime).

The package installs from several top-level folders (`schemas/`, `generators/`, `filters/`,
`pipelines/` become `synth.*`, see pyproject's package-dir), which pyright cannot map: it would
treat every `synth.filters` import as unknown and check nothing across packages. So this script
lays the package out as Python imports it (real folders, each file a symlink to the repository's)
in a temporary folder, runs the checker there with pyproject's [tool.basedpyright] settings, and
prints the findings with the repository's paths. Exit status: the checker's.

    python scripts/typecheck.py
"""

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_layout() -> dict[str, Path]:
    """Import package -> the repository folder it is installed from."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    tool = project["tool"]["setuptools"]
    mapped = tool.get("package-dir", {})
    return {name: ROOT / mapped.get(name, name.replace(".", "/")) for name in tool["packages"]}


def shadow(into: Path) -> dict[str, str]:
    """The package tree under `into` with symlinked files; returns shadow path -> repository path."""
    paths = {}
    for package, folder in package_layout().items():
        target = into / package.replace(".", "/")
        target.mkdir(parents=True, exist_ok=True)
        for source in folder.glob("*.py"):
            (target / source.name).symlink_to(source)
            paths[str(target / source.name)] = str(source.relative_to(ROOT))
    return paths


def main() -> int:
    checker = shutil.which("basedpyright") or str(Path(sys.executable).parent / "basedpyright")
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["basedpyright"]
    with tempfile.TemporaryDirectory(prefix="synth-typecheck-") as folder:
        root = Path(folder)
        paths = shadow(root)
        config = {
            **{key: value for key, value in settings.items() if key not in ("include", "exclude", "venvPath")},
            "include": ["synth"],
            "exclude": [f"synth/{path.removeprefix('synth/')}" for path in settings.get("exclude", [])],
            "venvPath": str(ROOT / settings.get("venvPath", ".")),
        }
        (root / "pyrightconfig.json").write_text(json.dumps(config))
        result = subprocess.run([checker, "-p", str(root)], capture_output=True, text=True, cwd=ROOT)
        output = result.stdout + result.stderr
        for shadow_path, real in sorted(paths.items(), key=lambda pair: -len(pair[0])):
            output = output.replace(shadow_path, real)
        print(output.replace(str(root) + "/", ""), end="")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())

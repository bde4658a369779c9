"""Print the file map CONTRIBUTING.md shows: one line a module, from the first sentence of its
docstring (tests/test_docs.py checks CONTRIBUTING's copy is current).

    python scripts/file_map.py            # print it
    python scripts/file_map.py --write    # replace the map in CONTRIBUTING.md
"""

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ["synth", "schemas", "generators", "filters", "pipelines"]
OTHER = {
    "data/": "the bundled knowledge graph (synth.data), built by scripts/build_bundled_kg.py",
    "docs/": "the manual (MkDocs); docs/reference/ is generated",
    "scripts/": "how the bundled data was derived, the type check, generated pages",
    "benchmarks/": "performance measurements, run by hand; each prints its figures",
    "examples/": "scripts users run in a trainer's own environment to check an export",
    "tests/": "mirrors the packages; tests/fixtures/ holds small shipped fixtures",
}
BEGIN, END = "<!-- file map: python scripts/file_map.py --write -->", "<!-- end of file map -->"
WIDTH = 120


def summary(path: Path) -> str:
    """The first sentence of the module's docstring, on one line."""
    docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    text = " ".join(docstring.split())
    first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0].rstrip(".")
    return first


def tree() -> str:
    lines = []
    for top in FOLDERS:
        folder = ROOT / top
        for path in sorted(folder.rglob("*.py")):
            if "cpu_compat" in path.parts or "__pycache__" in path.parts:
                continue
            relative = path.relative_to(ROOT).as_posix()
            text = summary(path)
            if path.name == "__init__.py" and not text:
                continue
            entry = f"{relative:<40} {text}"
            lines.append(entry if len(entry) <= WIDTH else entry[: WIDTH - 3] + "...")
    lines += [f"{folder:<40} {text}" for folder, text in OTHER.items()]
    return "```\n" + "\n".join(lines) + "\n```"


def with_map(text: str) -> str:
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[:start] + "\n" + tree() + "\n" + text[end:]


if __name__ == "__main__":
    if "--write" in sys.argv:
        contributing = ROOT / "CONTRIBUTING.md"
        contributing.write_text(with_map(contributing.read_text()))
    else:
        print(tree())

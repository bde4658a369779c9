"""The project's modules and packages import each other without circles, and at module top.

A circle hidden by a function-level import still ties two modules together (neither can be read,
tested or moved alone), so the graph counts every import of a project module, wherever it is,
except those under `if TYPE_CHECKING:` (annotations only). A function-level import of a project
module is allowed only where a comment on the import or just above it says why (a heavy optional
dependency, or keeping a command fast), and in the CLI, whose commands import what they call so
that `synth --help` stays instant (synth/cli/main.py says so once).
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "synth": ROOT / "synth",
    "synth.schemas": ROOT / "schemas",
    "synth.generators": ROOT / "generators",
    "synth.filters": ROOT / "filters",
    "synth.pipelines": ROOT / "pipelines",
}


def project_modules() -> dict[str, Path]:
    modules = {}
    for package, folder in PACKAGES.items():
        for path in folder.rglob("*.py"):
            if "cpu_compat" in path.parts:
                continue
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join([package, *parts])] = path
    return modules


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, int, bool]]:
    """(imported project module, line, at module top) for each import in the module."""
    tree = ast.parse(path.read_text())
    skipped = _type_checking_lines(tree)
    top = {id(node) for node in tree.body}
    top |= {id(child) for node in tree.body if isinstance(node, ast.Try) for child in node.body}
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)) or node.lineno in skipped:
            continue
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                package = name if path.name == "__init__.py" else name.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base for alias in node.names]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                found.append((target, node.lineno, id(node) in top))
    return found


def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: {target for target, _, _ in imports_of(name, path, modules)} for name, path in modules.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    sys.setrecursionlimit(10_000)
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(edges.get(node, ())):
            if state.get(target) == 1:
                return stack[stack.index(target) :] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_circle_among_the_projects_modules():
    cycle = find_cycle(graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle)


def package_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """The graph of packages: a module counts as the folder it sits in (a package's own modules, not
    its subpackages: synth's loose root modules are the package `synth`), so two packages whose
    modules import each other's in opposite directions form a circle even when no module does."""

    def package(name: str) -> str:
        return name if modules[name].name == "__init__.py" else name.rpartition(".")[0]

    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        for target, _, _ in imports_of(name, path, modules):
            if package(target) != package(name):
                edges.setdefault(package(name), set()).add(package(target))
    return edges


def test_no_import_circle_among_the_projects_packages():
    cycle = find_cycle(package_graph(project_modules()))
    assert cycle is None, "package import circle: " + " -> ".join(cycle)


def test_the_package_graph_sees_a_planted_circle(tmp_path):
    module = tmp_path / "leaky.py"  # the graph of knowledge importing a recipe: kg -> pipelines -> kg
    module.write_text("from synth.pipelines.base import Recipe\n")
    modules = {**project_modules(), "synth.kg.leaky": module}
    assert find_cycle(graph()) is None and find_cycle(package_graph(project_modules())) is None
    cycle = find_cycle(package_graph(modules))
    assert cycle is not None and {"synth.kg", "synth.pipelines"} <= set(cycle)


def test_the_graph_walk_finds_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_project_modules_are_imported_at_module_top_unless_a_comment_says_why():
    modules = project_modules()
    unexplained = []
    for name, path in modules.items():
        if name.startswith("synth.cli."):
            continue
        lines = path.read_text().splitlines()
        for target, line, at_top in imports_of(name, path, modules):
            if not at_top and "#" not in lines[line - 1] and not lines[line - 2].strip().startswith("#"):
                unexplained.append(f"{path.relative_to(ROOT)}:{line} imports {target}")
    assert not unexplained, f"{len(unexplained)} function-level imports without a reason:\n" + "\n".join(unexplained)


LOWER = ("synth.llm", "synth.kg", "synth.search", "synth.solving", "synth.store", "synth.contract")
UPPER = ("synth.generators", "synth.filters", "synth.pipelines")


def layer_breaches(modules: dict[str, Path]) -> list[str]:
    """Imports from the lower layers (models, graphs, search, solving, the store, the contract) into
    the upper ones (generators, filters, recipes): the lower ones must stand alone."""
    return [
        f"{name} -> {target} (line {line})"
        for name, path in modules.items()
        if name.startswith(LOWER)
        for target, line, _ in imports_of(name, path, modules)
        if target.startswith(UPPER)
    ]


def test_lower_layers_never_import_generators_filters_or_recipes():
    assert layer_breaches(project_modules()) == []


def test_the_layer_rule_sees_a_breach(tmp_path):
    module = tmp_path / "leaky.py"
    module.write_text("from synth.filters.leakage import LeakageFilter\n")
    modules = {**project_modules(), "synth.store.leaky": module}
    assert layer_breaches(modules) == ["synth.store.leaky -> synth.filters.leakage (line 1)"]

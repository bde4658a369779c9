"""YAML that cannot expand without bound: every place synth reads YAML a user wrote (a flows file, a
`--param` value) refuses an alias to a value that contains it, and aliases that expand the text to
more than MAX_YAML_VALUES values or MAX_YAML_DEPTH levels (a 420-byte alias bomb expands to 10^9)."""

from collections.abc import Callable
from typing import Any

import yaml

from synth.errors import ConfigError

MAX_YAML_VALUES = 100_000
MAX_YAML_DEPTH = 64


def load(text: str, where: Callable[[int], str]) -> Any:
    """`text` parsed (safe_load) once its expansion is known bounded; `where(line)` names a place for
    a refusal ("flows.yaml: line 3", "--param 'hops'"). yaml.YAMLError for text that is not YAML."""
    refuse_expansion(yaml.compose(text), where)
    return yaml.safe_load(text)


def refuse_expansion(root: yaml.Node | None, where: Callable[[int], str]) -> None:
    """ConfigError, naming the line, for a recursive alias or an expansion past the bounds. Each node
    is sized once, so the check costs the size of the text, not of its expansion."""
    on_path: set[int] = set()
    sizes: dict[int, int] = {}

    def size(node: yaml.Node) -> int:
        if id(node) in sizes:
            return sizes[id(node)]
        line = node.start_mark.line + 1
        if id(node) in on_path:
            raise ConfigError(
                f"{where(line)}: an alias refers to a value that contains it (a recursive alias); write the value out "
                "instead"
            )
        if len(on_path) >= MAX_YAML_DEPTH:
            raise ConfigError(f"{where(line)}: values nested deeper than {MAX_YAML_DEPTH} levels; flatten them")
        total = 1
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
            on_path.add(id(node))
            children = (
                [part for pair in node.value for part in pair] if isinstance(node, yaml.MappingNode) else node.value
            )
            total += sum(size(child) for child in children)
            on_path.discard(id(node))
        if total > MAX_YAML_VALUES:
            raise ConfigError(
                f"{where(line)}: its aliases expand it to more than {MAX_YAML_VALUES:,} values (an alias bomb?); "
                "write the values out"
            )
        sizes[id(node)] = total
        return total

    if root is not None:
        size(root)

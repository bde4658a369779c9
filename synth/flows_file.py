"""`flows.yaml`: named runs of recipes (recipe, dataset name, parameters) and the models they may
use, validated strictly.

`synth generate --flow NAME` runs one; scheduling and deployment of the same entries build on this.
Models are declared once by name (`models:`), and recipes refer to them by role.
"""

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from synth.config import FrozenConfig
from synth.errors import ConfigError, NotFoundError
from synth.llm.models import ModelSpec


class FlowEntry(FrozenConfig):
    recipe: str
    dataset: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    description: str = ""


class FlowsFile(FrozenConfig):
    flows: dict[str, FlowEntry] = Field(default_factory=dict)
    models: dict[str, ModelSpec] = Field(default_factory=dict)


def load_flows(path: Path) -> FlowsFile:
    if not path.is_file():
        raise NotFoundError(f"flows file {path} not found; pass --flows-file PATH or run from the folder holding flows.yaml")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}: not valid YAML{where}; fix the syntax") from None
    try:
        return FlowsFile.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        raise ConfigError(f"{path}: {key}: {first['msg']}") from None


def flow_params(entry: FlowEntry) -> list[str]:
    """The entry's parameters as `key=value` overrides (nested dicts flattened to dotted keys)."""
    def flatten(values: dict[str, Any], prefix: str = ""):
        for key, value in values.items():
            if isinstance(value, dict):
                yield from flatten(value, f"{prefix}{key}.")
            else:
                yield f"{prefix}{key}={yaml.safe_dump(value, default_flow_style=True).strip().removesuffix('...').strip()}"

    return list(flatten(entry.params))


def resolve_flow(path: Path, flow: str, recipe: str | None, name: str | None) -> tuple[str, str | None, list[str]]:
    """(recipe, dataset name, overrides) of flow `flow`; an explicit `recipe` must agree, `name` wins."""
    flows = load_flows(path).flows
    if flow not in flows:
        raise NotFoundError(f"no flow {flow!r} in {path}; it defines: {', '.join(flows)}")
    entry = flows[flow]
    if recipe and recipe != entry.recipe:
        raise ConfigError(f"--recipe {recipe} conflicts with flow {flow!r}, which runs {entry.recipe}; drop one")
    return entry.recipe, name or entry.dataset, flow_params(entry)

"""Recipe configuration: `--param a.b=value` overrides applied to defaults, then strict validation.

Values are parsed as YAML scalars, so `hops=3` is an int, `hops=[2,3]` a list and `dedup=false` a
bool. Validation errors name the parameter and say what was expected, on one line.
"""

from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from synth.errors import ConfigError


class FrozenConfig(BaseModel):
    """Base of every recipe config: immutable once built, unknown keys are errors.

    A nested section given as a mapping is merged into that field's default, so a partial override
    (`--param distill.agent.protocol=tags`, a flows.yaml key) changes those keys and nothing else,
    also where a field's default differs from its class's own defaults (the teacher's agent budget
    is not `AgentBudget()`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _merge_into_default(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, dict) or info.field_name is None:
            return value
        default = cls.model_fields[info.field_name].get_default(call_default_factory=True)
        if not isinstance(default, BaseModel):
            return value
        return merge_mappings(default.model_dump(exclude_unset=True), value)


Config = TypeVar("Config", bound=BaseModel)


def parse_param(text: str) -> tuple[list[str], Any]:
    """`walk.hops=3` -> (["walk", "hops"], 3)."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not key or any(not part for part in key.split(".")):
        raise ConfigError(
            f"malformed --param {text!r}: expected key=value, e.g. --param hops=3 or --param walk.max_degree=200"
        )
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.split("."), value


def apply_params(base: dict[str, Any], params: list[str]) -> dict[str, Any]:
    """A copy of `base` with each `key.sub=value` override set (creating nested dicts as needed)."""
    result = _deep_copy(base)
    for text in params:
        path, value = parse_param(text)
        node = result
        for part in path[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"--param {text!r}: {part!r} is a value, not a group of parameters")
            node = child
        node[path[-1]] = value
    return result


def nest_dotted(values: dict[str, Any]) -> dict[str, Any]:
    """`{"walk.max_degree": 9}` -> `{"walk": {"max_degree": 9}}`, at every level: a YAML mapping
    may spell a nested parameter as `--param` does."""
    nested: dict[str, Any] = {}
    for key, value in values.items():
        node = nested
        *groups, last = str(key).split(".")
        for part in groups:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"parameter {key!r}: {part!r} is a value, not a group of parameters")
            node = child
        value = nest_dotted(value) if isinstance(value, dict) else value
        if isinstance(node.get(last), dict) and isinstance(value, dict):
            node[last] = {**node[last], **value}
        else:
            node[last] = value
    return nested


def merge_mappings(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    """`override` laid over `base`, mapping into mapping at every depth (lists and values replace)."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = merge_mappings(merged[key], value)
        else:
            merged[key] = value
    return merged


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _deep_copy(child) for key, child in value.items()}
    return value


def build_config(model: type[Config], values: dict[str, Any], what: str) -> Config:
    """Validate `values` into `model`, turning the first error into a one-line ConfigError."""
    try:
        return model.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "(top level)"
        if first["type"] == "extra_forbidden":
            known = ", ".join(sorted(_known_keys(model, first["loc"][:-1])))
            raise ConfigError(f"unknown parameter {key!r} for {what}; known parameters: {known}") from None
        raise ConfigError(f"bad parameter {key!r} for {what}: {first['msg']} (got {first.get('input')!r})") from None


def _known_keys(model: type[BaseModel], loc: tuple) -> list[str]:
    for part in loc:
        field = model.model_fields.get(str(part))
        annotation = field.annotation if field else None
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return []
        model = annotation
    return list(model.model_fields)

"""Recipe configuration: `--param a.b=value` overrides applied to defaults, then strict validation.

Values are parsed as YAML scalars, so `hops=3` is an int, `hops=[2,3]` a list and `dedup=false` a
bool. Validation errors name the parameter and say what was expected, on one line.
"""

import warnings
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator

from synth import bounded_yaml
from synth.errors import ConfigError, DeprecatedKey


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
        if info.field_name is None or not isinstance(value, (dict, list)):
            return value
        default = cls.model_fields[info.field_name].get_default(call_default_factory=True)
        if is_keyed_list(default):
            return merge_keyed(default, value)
        if not isinstance(value, dict) or not isinstance(default, BaseModel):
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
        value = bounded_yaml.load(raw, lambda line: f"--param {key!r}") if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return key.split("."), value


def apply_params(base: dict[str, Any], params: list[str]) -> dict[str, Any]:
    """A copy of `base` with each `key.sub=value` override set (creating nested dicts as needed)."""
    result = _deep_copy(base)
    for text in params:
        path, value = parse_param(text)
        node: Any = result
        for part in path[:-1]:
            child = _entry_of_kind(node, part) if isinstance(node, list) else node.setdefault(part, {})
            if child is None:
                raise ConfigError(f"--param {text!r}: the list given has no entry of kind {part!r}; add it to the list")
            if not isinstance(child, (dict, list)):
                raise ConfigError(f"--param {text!r}: {part!r} is a value, not a group of parameters")
            node = child
        if isinstance(node, list):
            raise ConfigError(f"--param {text!r}: name an entry's setting, e.g. checks.near_dup.threshold=0.7")
        node[path[-1]] = value
    return result


def _entry_of_kind(entries: list, kind: str) -> Any:
    """The entry of a keyed list given as a list (`checks=[format, near_dup]`) that `kind` names, as
    a mapping that further keys go into (a bare name becomes `{kind: name}` in place)."""
    for index, entry in enumerate(entries):
        if entry == kind:
            entries[index] = {"kind": kind}
            return entries[index]
        if isinstance(entry, dict) and entry.get("kind") == kind:
            return entry
    return None


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


def is_keyed_list(value: Any) -> bool:
    """A list of sections told apart by their `kind` (a recipe's checks)."""
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(entry, BaseModel) and hasattr(entry, "kind") for entry in value)
    )


def merge_keyed(default: list[BaseModel], value: Any) -> Any:
    """Entries given for a keyed list, each laid over the default entry of its kind: a mapping
    {kind: changes} changes the named entries (a kind not in `default` is appended); a list is
    the whole new list, each entry (a kind name or a mapping with `kind`) starting from its
    kind's default when `default` has one."""
    defaults = {entry.kind: entry.model_dump() for entry in default}  # type: ignore[attr-defined]
    if isinstance(value, dict):
        changes = {kind: change or {} for kind, change in value.items()}
        for kind, change in changes.items():
            if not isinstance(change, dict):
                raise ValueError(f"{kind}: expected a mapping of its settings, e.g. {{{kind}: {{enabled: false}}}}")
        merged = [merge_mappings(entry, changes.get(kind, {})) for kind, entry in defaults.items()]
        return merged + [{**change, "kind": kind} for kind, change in changes.items() if kind not in defaults]
    if not isinstance(value, list):
        return value
    entries = []
    for entry in value:
        if isinstance(entry, str) and entry in defaults:
            entry = defaults[entry]
        elif isinstance(entry, dict) and entry.get("kind") in defaults:
            entry = merge_mappings(defaults[entry["kind"]], entry)
        entries.append(entry)
    return entries


def warn_moved(old: str, new: str) -> None:
    """Say once, in one line, that config key `old` is now `new` (the old key is still read)."""
    warnings.warn(DeprecatedKey(f"config key {old!r} is now {new!r}; the old key still works for now"), stacklevel=4)


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
    if isinstance(value, list):
        return [_deep_copy(child) for child in value]
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

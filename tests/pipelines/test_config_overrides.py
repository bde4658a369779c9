"""A one-key override changes that key and nothing else, in every nested section of every recipe.

`--param distill.agent.protocol=tags` once rebuilt the teacher's whole agent budget from the
class's defaults (6 turns / 256 tokens became 4 / 96), because a nested mapping replaced the
section's default instead of being merged into it. This test walks every leaf under every nested
section of every built-in recipe, sets it to another valid value through `--param` (and as a
flows.yaml mapping), and compares every other leaf with the default config.
"""

import types
import typing
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from synth.config import apply_params, build_config, nest_dotted
from synth.errors import ConfigError
from synth.pipelines.recipes import RECIPES, get_recipe


def leaves(value: Any, path: tuple = ()) -> dict[tuple, Any]:
    """Dotted path -> value of every leaf (a list is a leaf: an override replaces it whole)."""
    if isinstance(value, dict):
        found: dict[tuple, Any] = {}
        for key, child in value.items():
            found.update(leaves(child, (*path, key)))
        return found
    return {path: value}


def field_type(model: type[BaseModel], path: tuple) -> Any:
    for part in path[:-1]:
        annotation = model.model_fields[part].annotation
        model = next(arg for arg in (annotation, *typing.get_args(annotation)) if _is_model(arg))
    return model.model_fields[path[-1]].annotation


def _is_model(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def candidates(kind: Any, default: Any) -> list[Any]:
    """Values to try instead of `default`, most likely to be valid first."""
    union = typing.get_origin(kind) in (typing.Union, types.UnionType)
    options = [arg for arg in typing.get_args(kind) if arg is not type(None)] if union else [kind]
    tried: list[Any] = []
    for option in options:
        if typing.get_origin(option) is typing.Annotated:  # a validated type, e.g. RetrieverChoice
            option = typing.get_args(option)[0]
        if typing.get_origin(option) is Literal:
            tried += [value for value in typing.get_args(option) if value != default]
        elif option is bool:
            tried.append(not default)
        elif option is int:
            base = default if isinstance(default, int) else 2
            tried += [base + 1, base - 1, base * 2, 1, 2, 200]
        elif option is float:
            base = default if isinstance(default, float | int) else 0.5
            tried += [base / 2, base + 0.1, base - 0.1, 0.5, 1.0, 2.0]
        elif option is str:
            tried += ["other", "other_name", "dense"]  # dense: a retriever name, for retriever fields
    return [value for value in tried if value != default]


FIXED = {("selfplay", "panel.enabled"): "selfplay needs its solver panel"}
"""Keys with one valid value in a recipe: an override is refused with this message."""


def one_key_overrides():
    for recipe in RECIPES:
        defaults = leaves(build_config(get_recipe(recipe).Config, {}, recipe).model_dump(mode="json"))
        for path in defaults:
            if len(path) > 1:
                yield pytest.param(recipe, path, id=f"{recipe}:{'.'.join(path)}")


@pytest.mark.parametrize("recipe, path", list(one_key_overrides()))
def test_one_key_override_keeps_every_sibling(recipe, path):
    config_class = get_recipe(recipe).Config
    default = leaves(build_config(config_class, {}, recipe).model_dump(mode="json"))
    kind = field_type(config_class, path)
    key = ".".join(path)
    if (recipe, key) in FIXED:
        with pytest.raises(ConfigError, match=FIXED[recipe, key]):
            build_config(config_class, apply_params({}, [f"{key}={_yaml(candidates(kind, default[path])[0])}"]), recipe)
        return
    changed = None
    for value in candidates(kind, default[path]):
        for values in (apply_params({}, [f"{key}={_yaml(value)}"]), nest_dotted({key: value})):
            try:
                config = build_config(config_class, values, recipe)
            except ConfigError:
                break  # this value is invalid for the key: try the next
            changed = leaves(config.model_dump(mode="json"))
            assert changed[path] != default[path], f"--param {key}={value!r} did not change {key}"
            siblings = {other: (default[other], changed[other]) for other in default if other != path}
            moved = {".".join(other): pair for other, pair in siblings.items() if pair[0] != pair[1]}
            assert not moved, f"--param {key}={value!r} also changed (default, now): {moved}"
        if changed is not None:
            break
    if changed is None and not isinstance(default[path], list | type(None)):
        pytest.fail(f"found no other valid value for {key} (type {kind}) to override it with")


def _yaml(value: Any) -> str:
    return {True: "true", False: "false"}.get(value, str(value)) if isinstance(value, bool) else str(value)


def test_a_flat_agent_key_keeps_the_roles_other_agent_defaults():
    """`panel.max_turns=6` (the spelling before the agent keys were grouped) moves under `agent`
    and is merged like `panel.agent.max_turns=6`."""
    config_class = get_recipe("multihop").Config
    flat = build_config(config_class, apply_params({}, ["panel.max_turns=6"]), "multihop")
    nested = build_config(config_class, apply_params({}, ["panel.agent.max_turns=6"]), "multihop")
    assert flat.panel.agent == nested.panel.agent
    assert flat.panel.agent.max_turns == 6

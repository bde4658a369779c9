"""Every parameter of a recipe's config as (key, default, description) rows: what `synth recipes
--params` prints and the reference page (docs/reference/recipe-keys.md) is generated from, so the
two always say what the configs say."""

import json
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from synth.config import is_keyed_list
from synth.pipelines.recipe_config import RecipeConfig


def parameter_rows(config: BaseModel, prefix: str = "") -> Iterator[tuple[str, str, str]]:
    """(dotted key, default as JSON, description) for every leaf of `config`; sections recurse, and a
    keyed list (a recipe's `checks`) lists each entry's settings under `checks.<kind>.`."""
    fields = type(config).model_fields
    if isinstance(config, RecipeConfig) and not prefix:  # a recipe's own keys first, then the standard sections
        standard = RecipeConfig.model_fields
        fields = {name: fields[name] for name in sorted(fields, key=lambda name: name in standard)}
    for name, field in fields.items():
        if name == "kind":
            continue
        value = getattr(config, name)
        key = f"{prefix}{name}"
        if isinstance(value, BaseModel):
            yield from parameter_rows(value, f"{key}.")
        elif is_keyed_list(value):
            yield key, json.dumps([entry.kind for entry in value]), field.description or ""
            for entry in value:
                yield from parameter_rows(entry, f"{key}.{entry.kind}.")
        else:
            yield key, _shown(value), field.description or ""


def _shown(value: Any) -> str:
    return json.dumps(to_jsonable_python(value))


def reference_page() -> str:
    """docs/reference/recipe-keys.md: every built-in recipe's keys, defaults and descriptions."""
    from synth.pipelines.recipes import RECIPES  # the recipe modules load the world stack: only for this page

    lines = [
        "# Recipe parameters",
        "",
        "Generated from the recipes' configs by `python scripts/recipe_reference.py` (a test checks it is",
        "current). Set any key with `--param key=value` or under a flows entry's `params:`; a check's",
        "settings are under `checks.<kind>.` (see [Filters and checks](../filters.md)).",
    ]
    for recipe in RECIPES.values():
        config = recipe.load().Config()
        lines += [
            "",
            f"## {recipe.name}",
            "",
            recipe.description,
            "",
            "| key | default | description |",
            "|---|---|---|",
        ]
        for key, default, description in parameter_rows(config):
            shown = default if len(default) <= 60 else default[:57] + "..."
            lines.append(f"| `{key}` | `{_cell(shown)}` | {_cell(description)} |")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")

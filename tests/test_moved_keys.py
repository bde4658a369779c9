"""Every config key that moved means what its new key means, in every recipe: the old key and the new
one validate to the same config (so a run publishes the same outputs), whether the checks are left
at their defaults or listed as `synth curate --checks` lists them; or both are refused alike.

The moved keys are read from where they are declared (the check kinds, the recipes' renamed keys, the
world keys and the multiplicity keys an older `world` section held), so a key moved later is tested
without editing this file."""

import warnings
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from synth.config import apply_params, build_config
from synth.errors import ConfigError
from synth.filters.checks import KINDS
from synth.kg.multiplicity import WorldConfig
from synth.pipelines import curate, selfplay
from synth.pipelines.recipes import RECIPES
from synth.search.world_settings import WORLD_KEYS

WORLD_VALUES = {
    "kg": "movies",
    "corpus": "corpus.jsonl",
    "passage_words": 64,
    "retriever": "dense",
    "retrieval_k": 7,
    "contract": "searchr1",
}
LISTED = {"checks": [{"kind": "format"}, {"kind": "contamination", "benchmarks": []}, "near_dup"]}
"""A base as `synth curate` gives it: the checks listed, one of them with the CLI's own settings."""


def _changed(model: type[BaseModel], name: str) -> Any:
    """A value for field `name` of `model` other than its default, that the field accepts."""
    field = model.model_fields[name]
    default = field.get_default(call_default_factory=True)
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return round(default * 1.5 + 1, 3) if name != "hub_share" else 0.5
    if isinstance(default, list) or "list" in str(field.annotation):
        return ["bench.jsonl"]
    if "Path" in str(field.annotation):
        return "overrides.yaml"
    return None


def _moved_keys() -> list[tuple[str, str, str, Any]]:
    """(recipe, old key, new key, a value) for every key that moved in every recipe that had it."""
    moved = []
    for recipe in sorted(RECIPES):
        for kind, model in sorted(KINDS.items()):
            for name in model.model_fields:
                value = _changed(model, name) if name != "kind" else None
                if value is not None:
                    moved.append((recipe, f"{kind}.{name}", f"checks.{kind}.{name}", value))
        moved += [(recipe, key, f"world.{key}", WORLD_VALUES[key]) for key in WORLD_KEYS]
    for recipe, renamed in (("selfplay", selfplay.RENAMED_CHECK_KEYS), ("curate", curate.RENAMED_CHECK_KEYS)):
        for old, (kind, key) in renamed.items():
            moved.append((recipe, old, f"checks.{kind}.{key}", _changed(KINDS[kind], key)))
    for name in WorldConfig.model_fields:  # multihop's world section once held the world model's keys
        value = _changed(WorldConfig, name)
        if value is not None:
            moved.append(("multihop", f"world.{name}", f"multiplicity.{name}", value))
    return moved


MOVED = _moved_keys()


def _config(recipe: str, base: dict, key: str, value: Any) -> dict | str:
    """The validated config as JSON, or the refusal's message."""
    base = {**base, "source": "x"} if recipe == "curate" else dict(base)
    shown = value if isinstance(value, (int, float, bool)) else repr(value) if not isinstance(value, list) else value
    params = [f"{key}={shown!s}".replace("'", '"')] if not isinstance(value, list) else [f"{key}={value}"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            config = build_config(RECIPES[recipe].load().Config, apply_params(base, params), recipe)
    except ConfigError as error:
        assert "\n" not in str(error)
        return "refused"
    return config.model_dump(mode="json")


def test_every_kind_of_moved_key_is_covered():
    olds = {old.split(".")[0] for _, old, _, _ in MOVED}
    assert {"contamination", "near_dup", "format", "kg", "retriever", "against", "min_distinct_searches"} <= olds
    assert any(new.startswith("multiplicity.") for _, _, new, _ in MOVED)
    assert {recipe for recipe, _, _, _ in MOVED} == set(RECIPES)


@pytest.mark.parametrize("recipe, old, new, value", MOVED, ids=[f"{recipe}:{old}" for recipe, old, _, _ in MOVED])
@pytest.mark.parametrize("base", [{}, LISTED], ids=["defaults", "listed"])
def test_an_old_key_gives_what_its_new_key_gives(recipe, old, new, value, base, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("bench.jsonl").write_text('{"question": "Who?", "answer": "Nobody"}\n')
    with_new = _config(recipe, base, new, value)
    with_old = _config(recipe, base, old, value)
    assert with_old == with_new
    if base and isinstance(with_new, dict) and new.startswith("checks."):
        kind, key = new.split(".")[1:3]
        entry = next(entry for entry in with_new["checks"] if entry["kind"] == kind)
        assert entry[key] == (value if not isinstance(value, list) else [str(Path(item)) for item in value])

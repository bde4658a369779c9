"""The recipes `synth generate` can run: the built-in table, or any `Recipe` subclass by import path.

An explicit table (not a registration decorator). A recipe's module is imported only when the
recipe is used, so `synth recipes` and `synth --help` stay fast (the modules pull in the search
stack and the model backends). `--recipe package.module:ClassName` runs a recipe that lives
outside synth, e.g. in a project of one's own; the run folder records that path, so a resumed run
or a Prefect worker imports the same class.
"""

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from synth.errors import ConfigError, NotFoundError

if TYPE_CHECKING:  # the base class imports the model and store layers; this module stays light
    from synth.pipelines.base import Recipe


@dataclass(frozen=True)
class RecipeEntry:
    name: str
    description: str
    target: str
    """`module:Class` of the `Recipe` subclass."""

    def load(self) -> "type[Recipe]":
        return _import(self.target)


RECIPES: dict[str, RecipeEntry] = {
    entry.name: entry
    for entry in [
        RecipeEntry(
            name="multihop",
            description="Walk the knowledge graph and build multi-hop questions whose answer is unique in the graph.",
            target="synth.pipelines.multihop:MultihopRecipe",
        ),
        RecipeEntry(
            name="selfplay",
            description="A proposer agent searches the corpus and writes questions for target answers; RAG-verified, "
            "tried by a solver panel, kept in a difficulty band; rounds adapt the search depth.",
            target="synth.pipelines.selfplay:SelfplayRecipe",
        ),
        RecipeEntry(
            name="curate",
            description="Run synth's checks, solver panel and labels on a published version or an imported file; "
            "publish what passes as a new version whose parent is the source.",
            target="synth.pipelines.curate:CurateRecipe",
        ),
    ]
}


def get_recipe(name: str) -> "type[Recipe]":
    """The recipe class of a built-in name or of a `module:Class` path."""
    if name in RECIPES:
        return RECIPES[name].load()
    if ":" in name:
        return _import(name)
    raise NotFoundError(
        f"unknown recipe {name!r}; available: {', '.join(RECIPES)} (see `synth recipes`), "
        "or give a Recipe subclass as package.module:ClassName"
    )


def _import(target: str) -> "type[Recipe]":
    from synth.pipelines.base import Recipe  # deferred: see the module docstring
    from synth.pipelines.recipe_config import RecipeConfig  # deferred: as the base

    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if error.name is None or not f"{module_name}.".startswith(f"{error.name}."):
            raise  # the recipe's module exists and fails to import something else: its bug, shown whole
        raise NotFoundError(f"recipe {target!r}: no module {error.name!r}; give package.module:ClassName") from None
    found = getattr(module, class_name, None)
    if found is None:
        raise NotFoundError(f"recipe {target!r}: module {module_name} has no {class_name!r}")
    if not (isinstance(found, type) and issubclass(found, Recipe)):
        raise NotFoundError(f"{target!r} is not a Recipe subclass (synth.pipelines.base.Recipe)")
    if not issubclass(found.Config, RecipeConfig):
        raise ConfigError(
            f"recipe {target!r}: its Config {found.Config.__name__} is not a RecipeConfig; subclass "
            "synth.pipelines.recipe_config.RecipeConfig (it brings the standard world, checks, panel, ... sections)"
        )
    return found

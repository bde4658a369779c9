"""The recipes `synth generate` can run: name -> where its config model and runner live.

An explicit table (not a registration decorator), imported lazily so `synth recipes` stays fast.
"""

import importlib
from dataclasses import dataclass
from typing import Any

from synth.errors import NotFoundError


@dataclass(frozen=True)
class Recipe:
    name: str
    description: str
    module: str
    """Module holding `Config` (a FrozenConfig) and `run(config, context) -> RecipeResult`."""

    def load(self) -> Any:
        return importlib.import_module(self.module)


RECIPES: dict[str, Recipe] = {
    recipe.name: recipe
    for recipe in [
        Recipe(
            name="multihop",
            description="Walk the knowledge graph and build multi-hop questions whose answer is unique in the graph.",
            module="synth.pipelines.multihop",
        ),
        Recipe(
            name="selfplay",
            description="A proposer agent searches the corpus and writes questions for target answers; RAG-verified, "
            "tried by a solver panel, kept in a difficulty band; rounds adapt the search depth.",
            module="synth.pipelines.selfplay",
        ),
    ]
}


def get_recipe(name: str) -> Recipe:
    if name not in RECIPES:
        raise NotFoundError(f"unknown recipe {name!r}; available: {', '.join(RECIPES)} (see `synth recipes`)")
    return RECIPES[name]

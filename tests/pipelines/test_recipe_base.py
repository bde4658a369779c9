"""What the recipe base builds for every recipe: the teacher searches with its own k and matches
with its own threshold, and a recipe's stages are declared as the runner calls them."""

import inspect

import pytest

from synth.pipelines.recipes import RECIPES
from synth.run.generate import generate
from synth.search.world import World
from synth.settings import Settings


def test_the_teacher_searches_with_its_own_k_not_the_panels(tmp_path, monkeypatch):
    asked = []
    tools = World.tools

    def spy(self, retriever, k):
        asked.append(k)
        return tools(self, retriever, k)

    monkeypatch.setattr(World, "tools", spy)
    params = ["n=4", "hops=[2]", "panel.retrieval_k=2", "distill.enabled=true", "distill.n=1", "distill.retrieval_k=5"]
    generate(Settings(home=tmp_path), "multihop", params, llm="fake")
    assert 5 in asked and 2 in asked  # before, the teacher searched with the panel's k


@pytest.mark.parametrize("recipe", ["multihop", "selfplay", "curate"])
def test_every_recipe_declares_its_stages_as_the_runner_calls_them(recipe):
    """Rounds, panel and teacher shards are coroutines (they share a run's event loop); construction
    is synchronous (a streaming run's `construct_stream` is the coroutine)."""
    cls = RECIPES[recipe].load()
    assert inspect.iscoroutinefunction(cls.play_round) and not inspect.iscoroutinefunction(cls.construct)
    assert inspect.iscoroutinefunction(cls.attempt) and inspect.iscoroutinefunction(cls.distill)


def test_the_distill_section_carries_its_own_match_threshold():
    config = RECIPES["multihop"].load().Config.model_validate({"distill": {"f1_threshold": 0.5}})
    assert config.distill.f1_threshold == 0.5 and config.panel.f1_threshold == 0.8


def test_a_world_section_given_as_an_object_is_kept_and_old_keys_join_it():
    from synth.search.world_settings import WorldSettings

    config_type = RECIPES["multihop"].load().Config
    assert config_type(world=WorldSettings(retriever="dense")).world.retriever == "dense"
    with pytest.warns(FutureWarning, match="'contract' is now 'world.contract'"):
        both = config_type(world=WorldSettings(retriever="dense"), contract="searchr1").world
    assert (both.retriever, both.contract) == ("dense", "searchr1")

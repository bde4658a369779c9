import pytest
from pydantic import Field, ValidationError

from synth.config import FrozenConfig, apply_params, build_config, parse_param
from synth.errors import ConfigError


class Walk(FrozenConfig):
    max_degree: int = Field(default=100, gt=0)


class Recipe(FrozenConfig):
    n: int = 10
    hops: list[int] = [2, 3]
    walk: Walk = Walk()


def test_values_are_parsed_as_yaml_scalars():
    assert parse_param("hops=[2, 4]") == (["hops"], [2, 4])
    assert parse_param("walk.max_degree=50") == (["walk", "max_degree"], 50)
    assert parse_param("name=a=b") == (["name"], "a=b")


def test_overrides_build_a_frozen_config():
    config = build_config(Recipe, apply_params({}, ["n=5", "walk.max_degree=20"]), "recipe test")
    assert (config.n, config.walk.max_degree) == (5, 20)
    with pytest.raises(ValidationError):
        config.n = 6


@pytest.mark.parametrize("text", ["hops", "=3", "walk..x=1", ""])
def test_malformed_params_say_how_to_write_one(text):
    with pytest.raises(ConfigError, match="expected key=value"):
        parse_param(text)


def test_unknown_key_names_the_key_and_the_known_ones():
    with pytest.raises(ConfigError, match=r"unknown parameter 'walk.max_dgree'.*known parameters: max_degree"):
        build_config(Recipe, apply_params({}, ["walk.max_dgree=3"]), "recipe test")


def test_bad_value_names_the_key_and_the_value():
    with pytest.raises(ConfigError, match=r"bad parameter 'walk.max_degree'.*greater than 0.*got -1"):
        build_config(Recipe, apply_params({}, ["walk.max_degree=-1"]), "recipe test")


def test_setting_a_sub_key_of_a_value_is_refused():
    with pytest.raises(ConfigError, match="is a value"):
        apply_params({"n": 3}, ["n.x=1"])

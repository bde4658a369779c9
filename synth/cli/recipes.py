"""`synth recipes`: what `synth generate --recipe` accepts, with each recipe's parameters."""

import click

from synth.cli.options import json_option


@click.command()
@click.option("--params", "show_params", is_flag=True, help="Also list every parameter with its default.")
@json_option
def recipes(show_params: bool, as_json: bool) -> None:
    """List the recipes `synth generate --recipe` can run."""
    from synth.cli.render import print_json, print_table
    from synth.recipes import RECIPES

    listing = []
    for recipe in RECIPES.values():
        entry: dict[str, object] = {"name": recipe.name, "description": recipe.description}
        if show_params or as_json:
            entry["parameters"] = recipe.load().Config().model_dump(mode="json")
        listing.append(entry)
    if as_json:
        print_json(listing)
        return
    print_table(["recipe", "description"], [(entry["name"], entry["description"]) for entry in listing])
    if show_params:
        for entry in listing:
            parameters = entry["parameters"]
            rows = list(_flatten(parameters if isinstance(parameters, dict) else {}))
            print_table(["parameter", "default"], rows, title=f"{entry['name']} parameters (--param key=value)")


def _flatten(values: dict, prefix: str = ""):
    for key, value in values.items():
        if isinstance(value, dict) and value:
            yield from _flatten(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value

"""`synth recipes`: what `synth generate --recipe` accepts, with each recipe's parameters."""

import click

from synth.cli.options import json_option


@click.command()
@click.option(
    "--params", "show_params", is_flag=True, help="Also list every parameter with its default and what it does."
)
@json_option
def recipes(show_params: bool, as_json: bool) -> None:
    """List the recipes `synth generate --recipe` can run."""
    from synth.cli.render import print_json, print_table
    from synth.pipelines.recipes import RECIPES

    listing = []
    for recipe in RECIPES.values():
        entry: dict[str, object] = {"name": recipe.name, "description": recipe.description}
        if show_params or as_json:
            from synth.pipelines.recipe_params import parameter_rows

            config = recipe.load().Config()
            entry["parameters"] = config.model_dump(mode="json")
            entry["descriptions"] = {key: description for key, _, description in parameter_rows(config)}
        listing.append(entry)
    if as_json:
        print_json(listing)
        return
    print_table(["recipe", "description"], [(entry["name"], entry["description"]) for entry in listing])
    if show_params:
        from synth.pipelines.recipe_params import parameter_rows

        for recipe in RECIPES.values():
            rows = list(parameter_rows(recipe.load().Config()))
            title = f"{recipe.name} parameters (--param key=value)"
            print_table(["parameter", "default", "description"], rows, title=title, width=400)

"""`synth generate`: run a recipe and publish a new dataset version."""

import click

from synth.cli.options import flows_file_option, json_option, load_settings


@click.command()
@click.option("--recipe", help="Recipe to run (see `synth recipes`).")
@click.option("--flow", help="Run a named entry of the flows file instead (its recipe, dataset and params).")
@flows_file_option("The flows file --flow reads; its `models:` section declares models.")
@click.option("--n", "count", type=int, help="How many items to publish (same as --param n=N).")
@click.option("--seed", type=int, help="Random seed; the same seed and config reproduce the same items.")
@click.option("--name", help="Dataset name to publish under (default: the recipe name).")
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="Override a recipe parameter, e.g. --param hops=3; repeatable; see `synth recipes --params`.",
)
@click.option(
    "--llm",
    metavar="MODEL",
    help="Use this declared model for every model role of the recipe, e.g. --llm fake for a dry run (see `synth "
    "models list`).",
)
@click.option(
    "--shard-size",
    type=click.IntRange(min=1),
    help="Items per solver-panel shard, the unit a rerun resumes from (default 64).",
)
@click.option(
    "--staged",
    is_flag=True,
    help="Run stage after stage (each waits for the whole batch, as the Prefect flows do) instead of streaming "
    "each item through them; the same version is published either way.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(min=0),
    help="Stop (resumable, unpublished) before the run's model calls pass this many tokens.",
)
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    help="Stop before the estimated cost passes this many USD (needs `price:` on the models).",
)
@click.option(
    "--max-failure-rate",
    type=click.FloatRange(0, 1),
    help="Share of a stage's model calls that may fail before the run stops unpublished (default 0.1).",
)
@click.option("--quiet", is_flag=True, help="No progress bars.")
@json_option
def generate(
    recipe,
    flow,
    flows_file,
    count,
    seed,
    name,
    params,
    llm,
    shard_size,
    staged,
    max_tokens,
    max_cost,
    max_failure_rate,
    quiet,
    as_json,
) -> None:
    """Generate items with a recipe and publish them as a new version of a dataset.

    Parameters apply in order: the flow's, then --n/--seed, then each --param.

    Example: synth generate --recipe multihop --n 50 --seed 0
    """
    from synth.cli.summary import print_result
    from synth.progress import Progress
    from synth.run.generate import generate as run_generate
    from synth.run.limits import RunLimits

    values, limits = {}, None
    if flow:
        from synth.run.flows_file import resolve_flow

        recipe, name, values, limits = resolve_flow(flows_file, flow, recipe, name)
    limits = (limits or RunLimits()).merged(
        max_tokens, max_cost, max_failure_rate
    )  # this command's limits replace a rerun's earlier ones
    if not recipe:
        raise click.UsageError("give --recipe NAME (see `synth recipes`) or --flow NAME")
    values = {**values, **({"n": count} if count is not None else {}), **({"seed": seed} if seed is not None else {})}
    result = run_generate(
        load_settings(),
        recipe,
        list(params),
        name,
        Progress(enabled=False if quiet or as_json else None),
        llm=llm,
        flows_file=flows_file,
        shard_size=shard_size,
        limits=limits,
        config=values,
        staged=staged,
    )
    print_result(result, as_json)

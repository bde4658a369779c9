"""`synth mix`: one RL set from several versions, with weights, no duplicate question, and an order."""

import click

from synth.cli.options import load_settings


@click.command()
@click.argument("name")
@click.argument("sources", nargs=-1, required=True, metavar="NAME[@VERSION]=WEIGHT...")
@click.option("--n", type=click.IntRange(min=1), help="Items in the mixture (default: the most the sources allow).")
@click.option(
    "--order",
    type=click.Choice(["shuffled", "easy-to-hard"]),
    default="shuffled",
    show_default=True,
    help="How the items are stored, which every export keeps (verl: data.shuffle=false is printed for a curriculum).",
)
@click.option(
    "--by",
    type=click.Choice(["label", "hops", "pass-rate"]),
    default="label",
    show_default=True,
    help="easy-to-hard: the key (pass-rate: in --for-eval's eval of the policy; higher is easier).",
)
@click.option("--stages", type=click.IntRange(min=1), default=1, show_default=True, help="Curriculum stages.")
@click.option("--for-eval", "for_eval", metavar="EVAL_ID", help="The eval of the policy to train (--by pass-rate).")
@click.option("--seed", type=int, default=0, show_default=True, help="Which items are drawn and how they are shuffled.")
def mix(name, sources, n, order, by, stages, for_eval, seed) -> None:
    """Publish NAME: items of every source in proportion to its weight, no question twice.

    Example: synth mix rl-mix multihop@3=0.5 selfplay@1=0.3 nq-imported@1=0.2 --order easy-to-hard --stages 3
    """
    from synth.store import mixture

    request = mixture.MixRequest(
        name=name,
        sources=mixture.parse_sources(list(sources)),
        n=n,
        order=order,
        by=by,
        stages=stages,
        for_eval=for_eval,
        seed=seed,
    )
    version = mixture.mix(load_settings(), request, log=click.echo)
    ref = version.ref
    click.echo(f"browse: synth datasets show {ref}    export: synth export {ref} --format verl --out rl.parquet")

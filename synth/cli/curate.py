"""`synth curate`: synth's checks, solver panel and labels on a version or a file you already have."""

from pathlib import Path

import click

from synth.cli.options import flows_file_option, json_option, load_settings

CHECKS = "format,leakage,dedup,near_dup,contamination,outcome"


@click.command()
@click.argument("source")
@click.option("--format", "file_format", default="sft", show_default=True, help="How a SOURCE file is read.")
@click.option("--answer-field", help="A SOURCE file's field holding the reference answer (dotted path).")
@click.option(
    "--benchmark",
    "benchmarks",
    multiple=True,
    type=click.Path(path_type=Path),
    help="An evaluation file to keep items out of (repeatable; questions alone are enough).",
)
@click.option(
    "--against", multiple=True, metavar="NAME[@V]", help="A dataset whose items are near-duplicates (repeatable)."
)
@click.option("--checks", default=CHECKS, show_default=True, help="Comma-separated checks, in order; add shortcut.")
@click.option("--panel", is_flag=True, help="Also run the solver panel and label difficulty (model calls).")
@click.option("--name", help="Dataset name to publish under (default: SOURCE's dataset or file name + -curated).")
@click.option(
    "--param", "params", multiple=True, metavar="KEY=VALUE", help="Any curate parameter (synth recipes --params)."
)
@click.option("--llm", metavar="MODEL", help="Use this declared model for every model role (--llm fake: dry run).")
@flows_file_option("The flows file whose `models:` section declares models.")
@click.option("--shard-size", type=click.IntRange(min=1), help="Items per solver-panel shard (default 64).")
@click.option("--quiet", is_flag=True, help="No progress bars.")
@json_option
def curate(
    source,
    file_format,
    answer_field,
    benchmarks,
    against,
    checks,
    panel,
    name,
    params,
    llm,
    flows_file,
    shard_size,
    quiet,
    as_json,
) -> None:
    """Curate SOURCE (a published NAME[@VERSION] or a file `synth datasets import` reads) into a new version.

    The new version keeps what passes, names SOURCE as its parent, and keeps every verdict with the
    text of each dropped item.

    Example: synth curate imported@1 --benchmark hotpot_dev.json --against multihop
    """
    from synth.cli.summary import print_result
    from synth.progress import Progress
    from synth.run.generate import generate

    values = {
        "source": source,
        "file_format": file_format,
        "fields": {"answer_field": answer_field},
        "checks": [_check(name.strip(), against, benchmarks) for name in checks.split(",") if name.strip()],
        "panel": {"enabled": panel},
    }
    result = generate(
        load_settings(),
        "curate",
        list(params),
        name or _default_name(source),
        Progress(enabled=False if quiet or as_json else None),
        llm=llm,
        flows_file=flows_file,
        shard_size=shard_size,
        config=values,
    )
    print_result(result, as_json)


def _check(name: str, against, benchmarks) -> str | dict:
    """A `--checks` name as a checks entry, with what `--against` and `--benchmark` give it."""
    if name == "near_dup":
        return {"kind": name, "against": list(against)}
    if name == "contamination":
        return {"kind": name, "benchmarks": [str(path) for path in benchmarks]}
    return name


def _default_name(source: str) -> str:
    path = Path(source)
    base = path.stem if path.is_file() else source.partition("@")[0]
    cleaned = "".join(character if character.isalnum() or character in "-_." else "-" for character in base)
    return f"{cleaned.strip('-.') or 'curated'}-curated"

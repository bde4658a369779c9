"""`synth runs`: what each run made, from `synth generate` or a Prefect flow."""

import json

import click

from synth.cli.options import json_option, load_settings


@click.group()
def runs() -> None:
    """Browse recipe runs: status, counts, funnel, tokens, time, Prefect links."""


@runs.command("list")
@click.option("--dataset", help="Only runs that publish to this dataset.")
@click.option("--limit", type=int, default=20, show_default=True, help="How many of the newest runs.")
@json_option
def list_runs(dataset: str | None, limit: int, as_json: bool) -> None:
    """List the newest runs."""
    from synth.cli.render import print_json, print_table
    from synth.store.catalog import Catalog

    settings = load_settings()
    with Catalog.open(settings, read_only=True) as catalog:
        found = catalog.runs(dataset, limit)
    if as_json:
        print_json([run.model_dump(mode="json") for run in found])
        return
    if not found:
        click.echo("no runs yet; `synth generate --recipe multihop` or `synth flows run NAME` makes one")
        return
    rows = [
        (
            run.run_id,
            run.status,
            run.started_at.strftime("%Y-%m-%d %H:%M"),
            run.recipe,
            f"{run.dataset}@{run.version}" if run.version else run.dataset,
            run.runner,
            (run.summary.get("llm") or {}).get("completion_tokens", ""),
            run.summary.get("seconds", ""),
            len(run.resumed_stages),
        )
        for run in found
    ]
    print_table(
        ["run", "status", "started", "recipe", "version", "runner", "completion tokens", "seconds", "resumed stages"],
        rows,
    )


@runs.command("show")
@click.argument("run_id")
@json_option
def show(run_id: str, as_json: bool) -> None:
    """One run (RUN_ID or a prefix of it): funnel, summary, stages and its Prefect UI link."""
    from synth.cli.render import print_json, print_table
    from synth.store.catalog import Catalog

    with Catalog.open(load_settings(), read_only=True) as catalog:
        run = catalog.run(run_id)
    if as_json:
        print_json(run.model_dump(mode="json"))
        return
    click.echo(
        f"run {run.run_id}: {run.status}, recipe {run.recipe}, "
        f"{f'published {run.dataset}@{run.version}' if run.version else f'dataset {run.dataset}'}, runner {run.runner}"
    )
    if run.ui_url:
        click.echo(f"Prefect UI: {run.ui_url}")
    if run.error:
        click.echo(f"error: {run.error}")
    click.echo(
        f"stages: {', '.join(run.stages)}"
        + (f" (found done: {', '.join(run.resumed_stages)})" if run.resumed_stages else "")
    )
    if run.funnel:
        print_table(
            ["stage", "in", "kept", "dropped"],
            [
                (stage.stage, stage.input, stage.kept, ", ".join(f"{k}: {v}" for k, v in stage.dropped.items()))
                for stage in run.funnel
            ],
            title="funnel",
        )
    summary = {key: value for key, value in run.summary.items() if key != "llm"}
    llm = run.summary.get("llm") or {}
    figures = [(key, json.dumps(value) if isinstance(value, (dict, list)) else value) for key, value in summary.items()]
    figures += [(key, value) for key, value in llm.items() if key != "by_stage_model"]
    print_table(["figure", "value"], figures, title="summary")

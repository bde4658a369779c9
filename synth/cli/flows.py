"""`synth flows`: check, run, serve and deploy the named runs of flows.yaml as Prefect flows."""

from pathlib import Path

import click

from synth.cli.options import flows_file_option, json_option, load_settings

flows_file_argument = flows_file_option("The flows file to read.")


@click.group()
def flows() -> None:
    """Run the entries of flows.yaml as Prefect flows, now or on their schedules."""


@flows.command("validate")
@flows_file_argument
def validate(flows_file: Path) -> None:
    """Check flows.yaml: keys, cron schedules, recipes, parameters and model references."""
    from synth.run.flows_file import load_flows

    loaded = load_flows(flows_file, check=True)
    scheduled = sum(1 for entry in loaded.flows.values() if entry.schedule)
    click.echo(
        f"{flows_file}: ok ({len(loaded.flows)} flows, {scheduled} scheduled, {len(loaded.models)} models declared)"
    )


@flows.command("run")
@click.argument("name")
@flows_file_argument
@json_option
def run(name: str, flows_file: Path, as_json: bool) -> None:
    """Run flow NAME now as a Prefect flow run (no server needed; a rerun resumes an unfinished run).

    Example: synth flows run multihop-small
    """
    from synth.cli.render import print_json
    from synth.run.orchestrate import run_flow

    result = run_flow(load_settings(), flows_file, name)
    if as_json:
        print_json(result)
    else:
        click.echo(
            f"published {result['ref']}: {result['items']} items (run {result['run_id']}; `synth runs show "
            f"{result['run_id']}`)"
        )


@flows.command("serve")
@click.argument("names", nargs=-1)
@flows_file_argument
def serve(names: tuple[str, ...], flows_file: Path) -> None:
    """Register the schedules of NAMES (default: every scheduled flow) with the Prefect server at
    PREFECT_API_URL and run their flow runs from this process until stopped (Ctrl-C)."""
    from synth.run.orchestrate import serve_flows

    serve_flows(load_settings(), flows_file, names)


@flows.command("deploy")
@click.argument("names", nargs=-1)
@flows_file_argument
def deploy(names: tuple[str, ...], flows_file: Path) -> None:
    """Register NAMES (default: every scheduled flow) as deployments on their `work_pool`; a worker
    of that pool (`prefect worker start --pool NAME`) runs them."""
    from synth.run.orchestrate import deploy_flows

    for deployment_id in deploy_flows(load_settings(), flows_file, names):
        click.echo(f"deployment {deployment_id}")

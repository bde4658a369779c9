"""`synth audit sample|import|judge|list|show`: a reader's judgement of a version, stored with it."""

from pathlib import Path

import click

from synth.cli.options import flows_file_option, json_option, load_settings


def _sample_options(command):
    for option in reversed(
        [
            click.option("--n", type=click.IntRange(min=1), default=30, show_default=True, help="Items to read."),
            click.option("--seed", type=int, default=0, show_default=True, help="Which items (record it)."),
            click.option("--style", help="Only items of this style (plain, obfuscated, ...)."),
            click.option("--min-hops", type=click.IntRange(min=1), help="Only items of at least this many hops."),
            click.option("--max-hops", type=click.IntRange(min=1), help="Only items of at most this many hops."),
        ]
    ):
        command = option(command)
    return command


def _request(ref, n, seed, style, min_hops, max_hops):
    from synth.audit.commands import SampleRequest

    return SampleRequest(ref=ref, n=n, seed=seed, style=style, min_hops=min_hops, max_hops=max_hops)


@click.group()
def audit() -> None:
    """A reader's judgement of a version: sheets for a person, a served judge, stored verdicts."""


@audit.command("sample")
@click.argument("ref", metavar="NAME[@VERSION]")
@_sample_options
@click.option("--out", type=click.Path(path_type=Path), help="Folder for the sheets (default: ./audit-NAME-V-SAMPLE).")
@json_option
def sample_command(ref, n, seed, style, min_hops, max_hops, out, as_json) -> None:
    """Write a blind sheet (questions only), a reveal sheet and the rubric for N items of REF.

    Example: synth audit sample multihop@3 --n 30 --seed 7 --style plain"""
    from synth.audit.commands import write_sample
    from synth.cli.render import print_json

    written = write_sample(load_settings(), _request(ref, n, seed, style, min_hops, max_hops), out)
    out = written.sheets[0].parent
    if as_json:
        print_json({"sample": written.sample.model_dump(mode="json"), "sheets": [str(path) for path in written.sheets]})
        return
    sample = written.sample
    click.echo(
        f"sample {sample.id}: {len(sample.items)} items of {sample.ref} (seed {sample.seed}); sheets in {out}/\n"
        f"  give the reader {out}/blind.csv and {out}/rubric.md first, then {out}/reveal.csv;\n"
        f"  import the filled sheet: synth audit import {sample.ref} {out}/reveal.csv --reader NAME\n"
        f"  keep {out}/items.jsonl from the reader (answers, constraints: to re-measure later changes on these ratings)"
    )


@audit.command("import")
@click.argument("ref", metavar="NAME[@VERSION]")
@click.argument("sheet", type=click.Path(path_type=Path))
@click.option("--reader", default="reader", show_default=True, help="Who read (stored with the verdicts).")
@json_option
def import_command(ref, sheet, reader, as_json) -> None:
    """Store a reader's filled SHEET (CSV or JSON Lines) as an audit of REF."""
    from synth.audit.record import import_sheet

    stored = import_sheet(load_settings(), ref, sheet, reader)
    _print_stored(stored, as_json)


@audit.command("judge")
@click.argument("ref", metavar="NAME[@VERSION]")
@click.option("--model", required=True, help="A declared model (flows.yaml `models:`) that reads as the judge.")
@_sample_options
@flows_file_option("The flows file whose `models:` section declares the model.")
@json_option
def judge_command(ref, model, n, seed, style, min_hops, max_hops, flows_file, as_json) -> None:
    """Have a served MODEL read N items of REF with the rubric, blind first, then revealed.

    Example: synth audit judge multihop@3 --model judge --n 30 --seed 7"""
    from synth.audit.commands import judge
    from synth.run.flows_file import declared_models

    log = (lambda line: None) if as_json else (lambda line: click.echo(line, err=True))
    request = _request(ref, n, seed, style, min_hops, max_hops)
    stored, calls = judge(load_settings(), request, model, declared_models(flows_file), log=log)
    _print_stored(stored, as_json, calls)


@audit.command("list")
@click.argument("ref", metavar="NAME[@VERSION]")
@json_option
def list_command(ref, as_json) -> None:
    """Every audit of REF, with its figures."""
    from synth.cli.render import print_json
    from synth.store.audits import version_audits
    from synth.store.catalog import Catalog

    settings = load_settings()
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref)
    runs = version_audits(settings, version.name, version.version)
    if as_json:
        print_json([run.model_dump(mode="json") for run in runs])
        return
    if not runs:
        click.echo(f"no audits of {version.ref} yet; `synth audit sample {version.ref}` writes the sheets")
        return
    _print_runs(runs, f"audits of {version.ref}")


def print_audits(runs: list[dict], title: str) -> None:
    """One row per audit and style (runs as JSON, as `datasets show --json` gives them)."""
    from synth.cli.render import print_table
    from synth.store.card import shown

    if not runs:
        click.echo(f"{title}: none yet (synth audit sample NAME@V writes the sheets; synth audit judge reads them)")
        return
    rows = []
    for run in runs:
        by_style = run["summary"].get("by_style", {})
        groups = ([("all", run["summary"]["all"])] if len(by_style) > 1 else []) + list(by_style.items())
        for style, figures in groups:
            rows.append(
                (
                    run["id"],
                    f"{run['reader_kind']}: {run['reader']}",
                    f"{run['sample_id']} (seed {run['seed']})",
                    style,
                    figures["items"],
                    f"{figures['good']} / {figures['ok']} / {figures['bad']}",
                    shown(figures["right"]),
                    shown(figures["only"]),
                    shown(figures["bad_share"]),
                    shown(figures.get("bad_when_right")),
                    shown(figures.get("estimate_confirmed")),
                )
            )
    print_table(
        [
            "audit",
            "reader",
            "sample",
            "style",
            "items",
            "good / ok / bad",
            "right",
            "only",
            "bad",
            "bad, answer right",
            "unique as estimated",
        ],
        rows,
        title=title,
    )


def _print_runs(runs, title: str) -> None:
    print_audits([run.model_dump(mode="json") for run in runs], title)


def _print_stored(stored, as_json: bool, calls: dict | None = None) -> None:
    from synth.cli.render import print_json

    run = stored.run
    if as_json:
        print_json({"audit": run.model_dump(mode="json"), "stored": stored.stored, "llm": calls or {}})
        return
    _print_runs([run], f"audit {run.id} of {run.dataset}@{run.version}")
    said = "stored" if stored.stored else "already stored"
    calls_line = (
        f"; model calls: {calls.get('llm_requests', 0)} ({calls.get('llm_cache_hits', 0)} from the cache)"
        if calls
        else ""
    )
    click.echo(
        f"{said} as audit {run.id}{calls_line}; "
        f"sql: synth sql \"select * from audit_ratings where audit_id = '{run.id}'\""
    )

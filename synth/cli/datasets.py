"""`synth datasets`: list, inspect, reindex and import dataset versions."""

from pathlib import Path

import click

from synth.cli.options import json_option, load_settings

IMPORT_FORMATS = ["sft", "sft-chatml", "searchr1-sft", "dpo"]


@click.group()
def datasets() -> None:
    """Browse the dataset versions in the catalog."""


@datasets.command("list")
@click.option("--all", "include_all", is_flag=True, help="Also show pending and failed versions (never published).")
@json_option
def list_versions(include_all: bool, as_json: bool) -> None:
    """List dataset versions with their lineage."""
    from synth.cli.render import print_json, print_table
    from synth.store.catalog import Catalog
    from synth.store.health import healthy

    settings = load_settings()
    with Catalog.open(settings, read_only=True) as catalog:
        versions = catalog.versions(include_unpublished=include_all)
    # checked with the catalog closed; each damaged version is named once on stderr
    published = [version for version in versions if version.status == "published"]
    whole = {version.ref for version in healthy(settings.home.absolute(), published)}
    damaged = {version.ref for version in published} - whole
    if as_json:
        print_json([{**version.model_dump(mode="json"), "damaged": version.ref in damaged} for version in versions])
        return
    if not versions:
        click.echo(
            f"no dataset versions yet in {settings.catalog_path}; make one with `synth generate --recipe multihop`"
        )
        return
    rows = [
        (
            version.ref,
            "damaged" if version.ref in damaged else version.status,
            version.created_at.strftime("%Y-%m-%d %H:%M"),
            version.recipe,
            version.row_counts.get("items", ""),
            version.seed,
            version.kg_snapshot,
            version.parent,
            version.config_hash,
        )
        for version in versions
    ]
    columns = ["dataset", "status", "created", "recipe", "items", "seed", "kg snapshot", "parent", "config hash"]
    print_table(columns, rows, title=f"catalog: {settings.catalog_path}")


@datasets.command("card")
@click.argument("ref", metavar="NAME[@VERSION]")
def card(ref: str) -> None:
    """Print the version's dataset card (Markdown): lineage, difficulty, and what readers found.

    The Hugging Face export writes the same card as its README.md."""
    from synth.store.card import dataset_card

    click.echo(dataset_card(load_settings(), ref), nl=False)


@datasets.command("show")
@click.argument("ref", metavar="NAME[@VERSION]")
@click.option("--examples", default=3, show_default=True, help="How many example items to print.")
@json_option
def show(ref: str, examples: int, as_json: bool) -> None:
    """Show one version: lineage, funnel, difficulty histogram and example items."""
    from synth.cli.render import print_json, print_table
    from synth.store.describe import describe_version

    described = describe_version(load_settings(), ref, examples)
    if as_json:
        print_json(described)
        return
    version = described["version"]
    lineage = [
        ("dataset", f"{version['name']}@{version['version']}"),
        ("published", version.get("published_at")),
        ("recipe", version["recipe"]),
        ("seed", version.get("seed")),
        ("config hash", version["config_hash"]),
        ("code", version["code_version"]),
        ("kg snapshot", version.get("kg_snapshot")),
        ("models", version.get("models")),
        ("parent", version.get("parent")),
        ("rows", version.get("row_counts")),
        ("config", version.get("config")),
    ]
    print_table(["field", "value"], lineage, title="lineage")
    funnel = [
        (
            stage["stage"],
            stage["input"],
            stage["kept"],
            ", ".join(f"{reason}: {count}" for reason, count in stage["dropped"].items()),
        )
        for stage in version.get("funnel", [])
    ]
    print_table(["stage", "in", "kept", "dropped (reason: count)"], funnel, title="funnel")
    removed = described.get("removed", [])
    if removed:
        shown = [(row["filter"], row["reason"], row["question"]) for row in removed[:20]]
        more = f' (first 20 of {len(removed)}; all: synth sql "select * from verdicts where not kept")'
        print_table(["check", "reason", "question"], shown, title="removed" + (more if len(removed) > 20 else ""))
    print_table(["difficulty", "items"], list(described["difficulty"].items()), title="difficulty")
    print_table(["hops", "items"], list(described["hops"].items()), title="hops")
    summary = dict(version.get("summary") or {})
    distill = summary.pop("distill", None)
    rounds = summary.pop("rounds", None)
    quality = summary.pop("quality", None)
    realized = summary.pop("realized_difficulty", None)
    if summary:
        print_table(["summary", "value"], list(summary.items()), title="run summary")
    from synth.cli.summary import print_quality, print_realized, print_rounds

    print_quality(quality)
    print_realized(realized)

    print_rounds(rounds)
    if distill:
        print_table(["figure", "value"], list(distill.items()), title="distillation (teacher trajectories)")
    print_table(
        ["question", "answer", "hops", "difficulty"],
        [(row["question"], row["answer"], row["hops"], row["difficulty"]) for row in described["examples"]],
        title="examples",
    )
    from synth.cli.audit import print_audits

    print_audits(described["audits"], f"audits of {version['name']}@{version['version']}")


@datasets.command("reindex")
@json_option
def reindex_command(as_json: bool) -> None:
    """Rebuild the catalog from the version manifests: after the catalog file was lost, truncated
    or damaged (a damaged one is moved aside), registering every version and run it lacks."""
    from dataclasses import asdict

    from synth.cli.render import print_json
    from synth.store.reindex import reindex

    report = reindex(load_settings())
    if as_json:
        print_json(asdict(report))
        return
    found = report.found
    click.echo(
        f"registered {len(found)} version(s)"
        + (f": {', '.join(found)}" if found else "")
        + f"; runs restored: {report.runs_restored} from their folders, {report.runs_kept} from the old catalog, "
        f"{report.runs_rebuilt} from older run folders (status only)"
    )
    for problem in report.unreadable:
        click.echo(f"left out: {problem}")


@datasets.command("verify")
@click.argument("ref", required=False)
@json_option
def verify_command(ref: str | None, as_json: bool) -> None:
    """Check every part of the published versions (or of REF: NAME or NAME@VERSION) against what
    publishing recorded: present, no extras, sizes, SHA-256 and row counts; where the data root is a
    bucket, its parts there too. Exits 1 on damage."""
    from synth.cli.render import print_json, print_table
    from synth.errors import SynthError
    from synth.store.catalog import Catalog, parse_ref
    from synth.store.health import problems, quarantine

    settings = load_settings()
    with Catalog.open(settings, read_only=True) as catalog:
        if ref is None:
            versions = catalog.versions()
        elif parse_ref(ref)[1] is None:
            versions = catalog.versions(catalog.resolve(ref).name)
        else:
            versions = [catalog.resolve(ref)]
    report = {version.ref: problems(settings.home.absolute(), version, deep=True) for version in versions}
    for version in versions:  # damage only the hash sees keeps the version out of every later command
        quarantine(settings.home.absolute(), version, report[version.ref])
    if settings.bucket is not None:  # the bucket's parts too: the local copy may predate a change there
        from synth.store.bucket_root import verify_bucket

        for name, found in verify_bucket(settings, set(report)).items():
            report[name] = report[name] + [f"in {settings.bucket}: {problem}" for problem in found]
    damaged = {name: found for name, found in report.items() if found}
    if as_json:
        print_json(report)
    else:
        print_table(
            ["version", "state", "problems"],
            [(name, "damaged" if found else "ok", "; ".join(found)) for name, found in report.items()],
            title=f"{len(report)} version(s) checked",
        )
    if damaged:
        raise SynthError(
            f"{len(damaged)} damaged version(s): {', '.join(damaged)}; the rest are whole and keep working. "
            "Restore the named files from a copy, or republish the run"
        )


@datasets.command("import")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(IMPORT_FORMATS), required=True, help="Shape of the rows (see the list above)."
)
@click.option("--name", required=True, help="Dataset to publish the rows as (the next version of it).")
@click.option(
    "--answer-field",
    help="Row field with the reference answer(s), dotted for nested ones (e.g. reward_model.ground_truth); "
    "default: golden_answers, answer or reward_model.ground_truth, else the trajectory's final answer.",
)
@click.option("--question-field", help="Row field with the question (dotted); default: the first user message.")
@click.option("--aliases-field", help="Row field with other accepted answers (dotted); default: answer_aliases.")
@click.option(
    "--outcome-field",
    help="Row field saying whether the run succeeded (reward, correct, em; dotted); failed rows become rejected "
    "trajectories. Default: the first of reward, correct, is_correct, em, success the rows have.",
)
@click.option(
    "--outcome-threshold",
    type=float,
    default=1.0,
    show_default=True,
    help="A numeric outcome at or above this succeeded.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Refuse a row whose text looks like tool use in no dialect synth reads (default: import it without "
    "calls and report it).",
)
@click.option(
    "--kg",
    help="Check the trajectories' named entities against this graph's names and aliases (the unseen_entity "
    "finding): a graph name, snapshot folder or .duckdb file; `default` is the bundled graph. Without it, "
    "that check is not made (the other findings and the step labels always are).",
)
@json_option
def import_command(
    file: Path,
    fmt: str,
    name: str,
    answer_field: str | None,
    question_field: str | None,
    aliases_field: str | None,
    outcome_field: str | None,
    outcome_threshold: float,
    strict: bool,
    kg: str | None,
    as_json: bool,
) -> None:
    """Publish a file of trajectories (.jsonl, .json or .parquet) as a dataset version.

    \b
    sft           OpenAI messages + tools per row (assistant text in a dialect below is read too)
    sft-chatml    role/content chat with <tool_call>/<tool_response> tags (Qwen/Hermes)
    searchr1-sft  a prompt and one completion: Search-R1 <search>/<information>, R1-Searcher
                  <|begin_of_query|>/<|begin_of_documents|>, or ReAct Action:/Observation:
    dpo           TRL preference pairs {prompt, chosen, rejected}
    """
    from synth.cli.render import print_json
    from synth.store.imports import import_file
    from synth.store.imports.fields import ImportFields

    fields = ImportFields(
        question_field=question_field,
        answer_field=answer_field,
        aliases_field=aliases_field,
        outcome_field=outcome_field,
        outcome_threshold=outcome_threshold,
    )
    settings = load_settings()
    names = None
    if kg is not None:
        from synth.kg.name_mentions import WorldNames
        from synth.kg.snapshot import load_kg

        names = WorldNames.of_graph(load_kg(None if kg == "default" else kg, settings.kg_path))
    result = import_file(settings, file, fmt, name, fields, strict, names)
    if as_json:
        print_json(
            {
                "version": result.version.ref,
                "rows": result.rows,
                "items": result.items,
                "trajectories": result.trajectories,
                "notes": result.notes,
            }
        )
        return
    click.echo(
        f"imported {result.rows} rows from {file} as {result.version.ref}: {result.items} items, "
        f"{result.trajectories} trajectories"
    )
    for note in result.notes:
        click.echo(f"note: {note}")

"""`synth kg`: import knowledge graphs, list them, and see what one holds."""

import time
from pathlib import Path

import click

from synth.cli.options import json_option, load_settings


@click.group()
def kg() -> None:
    """Knowledge graphs: the bundled FB15k-237 and the ones you import."""


@kg.command("import")
@click.argument("name")
@click.option(
    "--triples",
    type=click.Path(path_type=Path),
    help="Triples file: head, relation, tail per line (TSV, CSV, other delimiters, JSONL; .gz ok).",
)
@click.option("--entities", type=click.Path(path_type=Path), help="Optional entity table: id, name[, description].")
@click.option(
    "--entities-join",
    type=click.Choice(["id", "name"]),
    default="id",
    show_default=True,
    help="The entity-table column the triples' node ids are: id, or name (triples that name their nodes).",
)
@click.option(
    "--relations",
    type=click.Path(path_type=Path),
    help="Optional relation table: id, forward, inverse[, head_type, tail_type, literal] (+ head_role, tail_role by "
    "header).",
)
@click.option(
    "--folder",
    type=click.Path(path_type=Path),
    help="A folder in synth's layout (triples.tsv[.gz], entities.tsv[.gz], relations.tsv) instead of the three "
    "options.",
)
@click.option(
    "--format",
    "file_format",
    type=click.Choice(["auto", "tsv", "csv", "jsonl", "sniff"]),
    default="auto",
    show_default=True,
    help="File format; auto goes by the extension and sniffs the delimiter of anything else.",
)
@click.option("--delimiter", help="Field delimiter of delimited files, e.g. '|' (overrides the format's).")
@click.option("--columns", help="Order of the triple fields in files without a header, e.g. head,tail,relation.")
@click.option("--replace", is_flag=True, help="Overwrite an imported graph of the same name.")
@json_option
def import_(
    name, triples, entities, entities_join, relations, folder, file_format, delimiter, columns, replace, as_json
) -> None:
    """Import a knowledge graph under NAME; then use it with `--param kg=NAME`.

    Malformed lines are reported with their line numbers and counted; nothing is dropped silently.

    Example: synth kg import mygraph --triples edges.txt --delimiter '|' --entities names.tsv
    """
    from synth.cli.render import print_json
    from synth.kg.importer import ImportSource, import_graph

    order = _columns(columns)
    options = {
        "format": file_format,
        "delimiter": _delimiter(delimiter),
        "columns": order,
        "entities_join": entities_join,
    }
    if folder is not None:
        if triples or entities or relations:
            raise click.UsageError("give either --folder or --triples/--entities/--relations, not both")
        source = ImportSource.from_folder(folder, **options)
    elif triples is not None:
        source = ImportSource(triples=triples, entities=entities, relations=relations, **options)
    else:
        raise click.UsageError("give --triples FILE (or --folder DIR)")
    log = (lambda line: None) if as_json else (lambda line: click.echo(line, err=True))
    report = import_graph(name, source, load_settings().kg_path, replace=replace, log=log)
    from synth.kg.store import load_graph

    started = time.perf_counter()
    load_graph(Path(report.path), log=log)  # saves the arrays every later run maps (synth.kg.arrays)
    log(f"saved the graph's arrays for memory-mapped loading in {time.perf_counter() - started:.1f} s")
    if as_json:
        print_json(report.as_dict())
        return
    click.echo(
        f"imported {name} ({report.snapshot_id}): {report.triples:,} triples, {report.entities:,} named entities, "
        f"{report.relations} relations in {report.seconds:.1f} s -> {report.path}"
    )
    if report.duplicate_triples:
        click.echo(f"  {report.duplicate_triples:,} duplicate triples merged")
    if report.unnamed_entities:
        click.echo(f"  {report.unnamed_entities:,} entities have no name in the entity table; their id stands in")
    if report.literal_relations:
        click.echo(f"  literal relations (values, used as cues, never walked): {', '.join(report.literal_relations)}")
    if report.auto_phrased_relations:
        click.echo(
            f"  {report.auto_phrased_relations} relations got phrases read from their ids (give --relations for "
            "better questions)"
        )
    for (kind, reason), count in sorted(report.problems.items()):
        click.echo(f"  skipped {count:,} {kind} lines: {reason}")
    for problem in report.examples:
        click.echo(f"    {problem.file}:{problem.line}: {problem.reason}: {problem.text!r}")


def _columns(text: str | None) -> tuple[str, ...] | None:
    if not text:
        return None
    order = tuple(part.strip() for part in text.split(","))
    if sorted(order) != ["head", "relation", "tail"]:
        raise click.BadParameter(
            "must name head, relation and tail once each, e.g. head,tail,relation", param_hint="--columns"
        )
    return order


def _delimiter(text: str | None) -> str | None:
    if text is None:
        return None
    text = {"\\t": "\t", "tab": "\t"}.get(text, text)
    if len(text) != 1:
        raise click.BadParameter("must be one character, e.g. '|' or tab", param_hint="--delimiter")
    return text


@kg.command("list")
@json_option
def list_graphs(as_json) -> None:
    """Imported knowledge graphs (the bundled FB15k-237 is the default and needs no import)."""
    from synth.cli.render import print_json, print_table
    from synth.kg.store import list_snapshots

    rows = list_snapshots(load_settings().kg_path)
    if as_json:
        print_json(rows)
        return
    print_table(
        ["name", "snapshot_id", "imported_at", "triples", "entities", "relations", "problems"],
        [
            [
                row["name"],
                row["snapshot_id"],
                row["imported_at"],
                row["counts"]["triples"],
                row["counts"]["entities"],
                row["counts"]["relations"],
                sum(row["counts"]["problems"].values()),
            ]
            for row in rows
        ],
    )
    if not rows:
        click.echo(
            "no imported graphs; `synth kg import NAME --triples FILE` adds one (the bundled FB15k-237 is the default)"
        )


@kg.command()
@click.argument("graph", required=False)
@click.option(
    "--top", type=click.IntRange(min=1), default=15, show_default=True, help="How many relations and hubs to list."
)
@json_option
def info(graph, top, as_json) -> None:
    """Sizes, degree distribution, relation counts and hub entities of GRAPH (default: the bundled one).

    GRAPH is an imported name, a snapshot folder or a .duckdb file.
    """
    from synth.cli.render import print_json, print_table
    from synth.kg.info import graph_info
    from synth.kg.snapshot import load_kg

    facts = graph_info(load_kg(graph, load_settings().kg_path), top=top)
    if as_json:
        print_json(facts)
        return
    degree = facts["degree"]
    click.echo(
        f"{facts['snapshot']}: {facts['entities']:,} entities ({facts['named_entities']:,} named), "
        f"{facts['triples']:,} triples, {facts['relations']} relations; adjacency {facts['adjacency_mib']} MiB"
    )
    click.echo("degree: " + ", ".join(f"{key} {value:g}" for key, value in degree.items()))
    print_table(
        ["degree", "entities"],
        [[row["degree"], row["entities"]] for row in facts["degree_histogram"]],
        title="degree histogram",
    )
    print_table(
        ["relation", "triples", "forward phrase"],
        [[row["relation"], row["triples"], row["forward"]] for row in facts["top_relations"]],
        title=f"top {top} relations",
    )
    print_table(
        ["id", "name", "degree"],
        [[row["id"], row["name"], row["degree"]] for row in facts["hubs"]],
        title=f"top {top} hubs",
    )

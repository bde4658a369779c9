"""`synth sql`: read-only SQL over the catalog's tables and views."""

import sys
from dataclasses import replace

import click

from synth.cli.options import load_settings


@click.command()
@click.argument("query")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="How to print the result.",
)
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=1000,
    show_default=True,
    help="Rows shown at most; the total is counted and said.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Seconds the query may run before it is stopped.",
)
def sql(query: str, output_format: str, as_json: bool, limit: int, timeout: float) -> None:
    """Run a read-only SQL QUERY against the catalog (DuckDB dialect).

    Tables and views: versions, items, verdicts, attempts, labels, trajectories (every published
    version; filter with `where dataset = 'NAME' and version = 2`). One statement at a time; writes,
    attaching, file-borne SQL and table functions beyond read_parquet, range and the catalog's own
    description are refused.

    Example: synth sql "select dataset, version, count(*) from items group by all"
    """
    from synth.cli.render import print_csv, print_json, print_table
    from synth.store.query import run_query
    from synth.store.sandbox import CLI_BOUNDS

    table = output_format == "table" and not as_json
    bounds = replace(CLI_BOUNDS, progress_bar=table and sys.stdout.isatty())  # DuckDB's bar writes to stdout
    result = run_query(load_settings(), query, limit=limit, timeout_s=timeout, bounds=bounds)
    if as_json or output_format == "json":
        print_json([dict(zip(result.columns, row)) for row in result.rows])
    elif output_format == "csv":
        print_csv(result.columns, result.rows)
    else:
        print_table(result.columns, result.rows)
    if result.truncated:
        click.echo(f"showing {len(result.rows):,} of {result.total:,} rows; --limit N shows more", err=True)

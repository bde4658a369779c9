"""Terminal output of the CLI: rich tables for people, JSON/CSV for programs."""

import csv
import io
import json
import sys
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any


def to_jsonable(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(key): to_jsonable(child) for key, child in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(child) for child in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False) + "\n")


def print_csv(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for row in rows:
        writer.writerow([json.dumps(to_jsonable(cell)) if isinstance(cell, (dict, list)) else cell for cell in row])
    sys.stdout.write(buffer.getvalue())


def cell_text(value: Any, width: int = 80) -> str:
    text = json.dumps(to_jsonable(value), ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
    if value is None:
        text = ""
    return text if len(text) <= width else text[: width - 1] + "…"


def print_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None, width: int = 80
) -> None:
    """`width`: longest text a cell shows before it is cut (`…`)."""
    from rich.console import Console
    from rich.table import Table

    table = Table(title=title, show_lines=False, title_justify="left")
    texts = [[cell_text(cell, width) for cell in row] for row in rows]
    for index, column in enumerate(columns):
        # Short columns (names, counts, ids) never wrap; long text folds.
        longest = max([len(str(column))] + [len(row[index]) for row in texts])
        table.add_column(str(column), overflow="fold", no_wrap=longest <= 24)
    for row in texts:
        table.add_row(*row)
    # Piped output gets room to breathe instead of rich's 80-column default.
    Console(width=None if sys.stdout.isatty() else 200).print(table)

"""Terminal output of the CLI: rich tables for people, JSON/CSV for programs."""

import csv
import io
import json
import re
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


_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")
"""Characters a terminal acts on or hides rather than shows: C0 and C1 controls but newline and tab
(ESC starts colour, cursor and OSC 8 hyperlink sequences), zero-width and bidirectional marks."""


def visible(text: str) -> str:
    """`text` with every character in `_INVISIBLE` written out as its escape (ESC shows as \\x1b), so a
    value prints as the characters it holds, never as an instruction to the terminal."""
    return _INVISIBLE.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)


def cell_text(value: Any, width: int = 80) -> str:
    text = json.dumps(to_jsonable(value), ensure_ascii=False) if isinstance(value, (dict, list)) else str(value)
    if value is None:
        text = ""
    text = visible(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def print_table(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str | None = None, width: int = 80
) -> None:
    """`width`: longest text a cell shows before it is cut (`…`)."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    # Every title, header and cell is a Text, which rich never parses as markup: data such as
    # `[/m/0abc]` or `[link=...]` prints as itself.
    table = Table(title=Text(visible(title)) if title else None, show_lines=False, title_justify="left")
    texts = [[cell_text(cell, width) for cell in row] for row in rows]
    for index, column in enumerate(columns):
        # Short columns (names, counts, ids) never wrap; long text folds.
        longest = max([len(str(column))] + [len(row[index]) for row in texts])
        table.add_column(Text(visible(str(column))), overflow="fold", no_wrap=longest <= 24)
    for row in texts:
        table.add_row(*(Text(cell) for cell in row))
    # Piped output gets room to breathe instead of rich's 80-column default.
    Console(width=None if sys.stdout.isatty() else 200).print(table)

"""The sheets a reader works from, and reading back what the reader wrote.

`blind.csv` holds the questions alone (id, question, an empty `answers` column for what the reader
names first); `reveal.csv` adds the stored answer, its aliases, the construction path and the
evidence, and the columns of the rubric to fill (`rating`, `right`, `only`, `other_answers`,
`note`); `rubric.md` says how. A reader gives the blind sheet and the rubric to whoever reads, and
imports the filled reveal sheet (CSV, or JSON Lines with the same keys).
"""

import csv
import json
from dataclasses import dataclass
from pathlib import Path

from synth.audit.rubric import RUBRIC, answer_list, rating, yes_no
from synth.errors import InputFileError
from synth.row_files import read_rows
from synth.schemas import AuditSample, Item

BLIND_COLUMNS = ["id", "question", "answers"]
REVEAL_COLUMNS = [
    "id",
    "question",
    "stored_answer",
    "aliases",
    "path",
    "evidence",
    "answers",
    "rating",
    "right",
    "only",
    "other_answers",
    "note",
]
FILLED = ("answers", "rating", "right", "only", "other_answers", "note")


@dataclass(frozen=True)
class Reveal:
    """What the reveal sheet shows of one item beside its question."""

    path: str
    evidence: str


@dataclass(frozen=True)
class SheetRow:
    """One rated row of a sheet, checked against the rubric's scale."""

    number: int
    sheet_id: str
    rating: str
    right: bool | None
    only: bool | None
    reader_answers: list[str]
    other_answers: list[str]
    note: str


def write_sheets(folder: Path, sample: AuditSample, items: dict[str, Item], reveals: dict[str, Reveal]) -> list[Path]:
    """blind.csv, reveal.csv and rubric.md in `folder` (made if missing), and items.jsonl: the sampled
    items' whole records by sheet id (answers, constraints), kept from the reader, so a later change
    to the construction or the world estimate can be re-measured against these ratings after the
    store they came from is gone; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    blind, reveal, rubric = folder / "blind.csv", folder / "reveal.csv", folder / "rubric.md"
    records = folder / "items.jsonl"
    with open(blind, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(BLIND_COLUMNS)
        for entry in sample.items:
            writer.writerow([entry.sheet_id, items[entry.item_id].question, ""])
    with open(reveal, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(REVEAL_COLUMNS)
        for entry in sample.items:
            item, shown = items[entry.item_id], reveals[entry.item_id]
            writer.writerow(
                [entry.sheet_id, item.question, item.answer, "; ".join(item.aliases), shown.path, shown.evidence]
                + [""] * len(FILLED)
            )
    rubric.write_text(
        f"# Audit of {sample.ref}, sample {sample.id} (seed {sample.seed})\n\n{RUBRIC}\n"
        "Fill the `answers` column of blind.csv before you open reveal.csv; then fill the rest of\n"
        f"reveal.csv and import it: synth audit import {sample.ref} reveal.csv --reader NAME\n"
    )
    with open(records, "w", encoding="utf-8") as handle:
        for entry in sample.items:
            record = items[entry.item_id].model_dump(mode="json")
            handle.write(json.dumps({"sheet_id": entry.sheet_id, "item": record}, ensure_ascii=False) + "\n")
    return [blind, reveal, rubric, records]


def read_sheet(path: Path) -> list[SheetRow]:
    """The rated rows of a filled sheet (CSV or JSON Lines); a row with a rating off the scale, a
    yes/no that is neither, no id, or an id twice is an InputFileError naming the row. Rows
    left without a rating are not rated (a reader may stop early) and are not returned."""
    rows, seen = [], {}
    for number, row in read_rows(path, "audit sheet"):
        sheet_id = str(row.get("id") or "").strip()
        if not sheet_id:
            raise InputFileError(f"{path} row {number}: no id; keep the id column of the sheet")
        if sheet_id in seen:
            raise InputFileError(f"{path} row {number}: id {sheet_id} is rated twice (first in row {seen[sheet_id]})")
        seen[sheet_id] = number
        if not str(row.get("rating") or "").strip():
            continue
        try:
            rows.append(
                SheetRow(
                    number=number,
                    sheet_id=sheet_id,
                    rating=rating(row.get("rating")),
                    right=yes_no(row.get("right"), "right"),
                    only=yes_no(row.get("only"), "only"),
                    reader_answers=answer_list(row.get("answers")),
                    other_answers=answer_list(row.get("other_answers")),
                    note=" ".join(str(row.get("note") or "").split()),
                )
            )
        except ValueError as error:
            raise InputFileError(f"{path} row {number} ({sheet_id}): {error}") from None
    if not rows:
        raise InputFileError(f"{path}: no row has a rating; fill the rating column (good / ok / bad) and import again")
    return rows

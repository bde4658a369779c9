"""Evaluation sets to check generated items against, read from the layouts they ship in.

JSONL, JSON (a list, or an object holding one), CSV/TSV and Parquet files; the question is the
first present of question/query/problem/prompt/input, the answers the first present of
golden_answers/answers/answer/target/output (a string, a list, or {"text": [...]} as in SQuAD)
plus any answer_aliases/aliases (MuSiQue), the id the first present of id/qid/_id/question_id/uid
(else the row number). This covers the files of Search-R1/FlashRAG (NQ, HotpotQA, 2Wiki, MuSiQue,
Bamboogle), BrowseComp, GAIA and SimpleQA as commonly distributed.
"""

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synth.errors import ConfigError, InputFileError, NotFoundError
from synth.row_files import read_rows
from synth.textfiles import MAX_LINE_BYTES, require_file, text_lines

QUESTION_KEYS = ("question", "query", "problem", "prompt", "input")
ANSWER_KEYS = ("golden_answers", "answers", "answer", "target", "output")
ALIAS_KEYS = ("answer_aliases", "aliases")
"""Other accepted spellings of the answer (MuSiQue's `answer_aliases`), added to the answers."""
ID_KEYS = ("id", "qid", "_id", "question_id", "uid")


@dataclass(frozen=True)
class BenchmarkItem:
    source: str
    """The benchmark file's name."""
    id: str
    question: str
    answers: tuple[str, ...]


def load_benchmark(path: Path) -> list[BenchmarkItem]:
    """Every row with a question; a clear error if the file is missing or has no question column."""
    path = Path(path)
    if not path.exists():
        raise NotFoundError(
            f"benchmark file {path} does not exist; pass files of questions/answers (JSONL, JSON, CSV, TSV or Parquet)"
        )
    require_file(path, "benchmark file")
    items = []
    for number, row in _rows(path):
        question = next((row[key] for key in QUESTION_KEYS if isinstance(row.get(key), str) and row[key].strip()), None)
        if question is None:
            raise InputFileError(
                f"benchmark file {path} row {number} has no question (a text field named one of "
                f"{', '.join(QUESTION_KEYS)}); fix or remove the row"
            )
        identifier = next((str(row[key]) for key in ID_KEYS if row.get(key) not in (None, "")), str(number))
        answer = next((row[key] for key in ANSWER_KEYS if row.get(key) not in (None, "")), None)
        aliases = [alias for key in ALIAS_KEYS for alias in _answers(row.get(key))]
        answers = tuple(dict.fromkeys(answer for answer in (*_answers(answer), *aliases) if answer.strip()))
        items.append(BenchmarkItem(path.name, identifier, question, answers))
    if not items:
        raise ConfigError(
            f"benchmark file {path} has no rows with a question field (one of {', '.join(QUESTION_KEYS)})"
        )
    return items


def _answers(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        try:  # CSV cells holding a JSON list, as exported by pandas or datasets
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return (value,)
        return _answers(parsed) if isinstance(parsed, (list, dict)) else (value,)
    if isinstance(value, dict):
        return _answers(value.get("text") or value.get("value") or value.get("aliases"))
    if isinstance(value, (list, tuple)):
        return tuple(answer for part in value for answer in _answers(part))
    return (str(value),) if value is not None else ()


def _rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row): CSV/TSV by line, the rest as `datasets import` reads them (a broken line or
    a row that is not an object is an error naming it, never skipped)."""
    suffix = Path(path.name.lower().removesuffix(".gz")).suffix  # text_lines unzips
    if suffix in (".csv", ".tsv"):
        csv.field_size_limit(MAX_LINE_BYTES)
        with text_lines(path) as handle:
            rows = csv.DictReader(handle, delimiter="\t" if suffix == ".tsv" else ",")
            for row in rows:
                yield rows.line_num, row
    else:
        yield from read_rows(path, "benchmark file")

"""A new export format is one module and one table entry: registered from the test suite, the
CLI offers it, lists it in `synth export --help`, and runs it like a built-in format."""

import csv
import sys
from pathlib import Path

import pytest

from synth.export_formats import EXPORT_FORMATS, ExportFormat, register_format
from synth.run.generate import generate
from synth.settings import Settings


@pytest.fixture
def questions_csv():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    entry = register_format(
        ExportFormat(
            "questions-csv", "id, question, answer, difficulty as CSV", "spreadsheets", "items", "questions_csv_export"
        )
    )
    yield entry
    EXPORT_FORMATS.pop(entry.name)
    sys.path.remove(str(Path(__file__).resolve().parent))


def test_a_registered_format_is_offered_listed_and_exported(questions_csv, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path))
    generate(Settings(home=tmp_path), "multihop", ["n=4", "hops=[2]"], llm="fake")
    code, out, _ = run_cli("export", "--help")
    assert code == 0 and "questions-csv" in out and "id, question, answer, difficulty as CSV" in out
    code, out, err = run_cli("export", "multihop", "--format", "questions-csv", "--out", str(tmp_path / "q.csv"))
    assert code == 0, err
    rows = list(csv.DictReader((tmp_path / "q.csv").open()))
    assert len(rows) == 4 and all(row["question"] and row["answer"] for row in rows) and "wrote 4 rows" in out


def test_every_built_in_format_names_a_module_with_an_exporter():
    for entry in EXPORT_FORMATS.values():
        assert callable(entry.exporter()), entry.name
        assert entry.carries in ("trajectories", "items")
    assert [name for name, entry in EXPORT_FORMATS.items() if entry.proposer] == ["sft", "sft-chatml", "sharegpt"]

"""Malformed input of every kind is one line naming the file (and line) and the fix, a non-zero
exit, and nothing half-written."""

import errno
import gzip
import os
from pathlib import Path

import pytest


def _one_line(code: int, err: str, *needles: str) -> None:
    lines = [line for line in err.strip().splitlines() if line]
    assert code != 0 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.fixture
def bad_files(tmp_path) -> dict[str, Path]:
    files = {
        "binary": tmp_path / "binary.jsonl",
        "fake_gz": tmp_path / "fake.tsv.gz",
        "one_line": tmp_path / "one_line.jsonl",
        "cut_gz": tmp_path / "cut.jsonl.gz",
    }
    files["binary"].write_bytes(bytes(reversed(range(256))) * 40)
    files["fake_gz"].write_text("a\tb\tc\n")
    files["one_line"].write_text('{"q": "' + "x" * (17 * 2**20) + '"}')
    data = gzip.compress(b'{"question": "q?", "answer": "a"}\n' * 5000)
    files["cut_gz"].write_bytes(data[: len(data) // 2])
    return files


def test_a_flows_file_that_is_not_utf8_is_named_by_flows_validate_and_generate(tmp_path, run_cli, monkeypatch):
    flows = tmp_path / "flows.yaml"
    flows.write_bytes(b'flows:\n  x:\n    recipe: multihop\n    description: "\xff\xfe"\n')
    _one_line(*run_cli("flows", "validate", "--flows-file", str(flows))[::2], "not UTF-8", "line 4")
    monkeypatch.chdir(tmp_path)
    _one_line(*run_cli("generate", "--recipe", "multihop", "--n", "2", "--llm", "fake")[::2], "flows.yaml", "not UTF-8")


def test_a_recursive_alias_is_refused_with_its_line(tmp_path, run_cli):
    flows = tmp_path / "flows.yaml"
    flows.write_text("flows:\n  x: &entry\n    recipe: multihop\n    params: {walk: *entry}\n")
    _one_line(*run_cli("flows", "validate", "--flows-file", str(flows))[::2], "recursive alias", "line 2")


def test_an_unknown_time_zone_fails_validation(tmp_path, run_cli):
    flows = tmp_path / "flows.yaml"
    flows.write_text("flows:\n  x:\n    recipe: multihop\n    timezone: Mars/Olympus\n")
    _one_line(*run_cli("flows", "validate", "--flows-file", str(flows))[::2], "timezone", "line 4", "Mars/Olympus")


@pytest.mark.parametrize(
    "kind, says", [("binary", "not UTF-8"), ("fake_gz", "not gzip"), ("one_line", "longer than"), ("cut_gz", "damaged")]
)
def test_bad_files_given_to_kg_import_are_one_line(bad_files, run_cli, kind, says, settings):
    _one_line(*run_cli("kg", "import", "broken", "--triples", str(bad_files[kind]))[::2], str(bad_files[kind]), says)
    assert not list(settings.kg_path.glob("*")) or not any("broken" in path.name for path in settings.kg_path.iterdir())


@pytest.mark.parametrize("kind, says", [("binary", "not UTF-8"), ("one_line", "longer than")])
def test_bad_files_given_to_datasets_import_are_one_line(bad_files, run_cli, kind, says):
    _one_line(*run_cli("datasets", "import", str(bad_files[kind]), "--format", "sft", "--name", "imported")[::2], says)
    code, out, _ = run_cli("datasets", "list", "--all", "--json")
    assert out.strip() == "[]"


@pytest.mark.parametrize("kind, says", [("binary", "not UTF-8"), ("fake_gz", "not gzip"), ("one_line", "longer than")])
def test_bad_contamination_benchmarks_are_one_line(bad_files, run_cli, kind, says):
    args = (
        "generate",
        "--recipe",
        "multihop",
        "--n",
        "2",
        "--llm",
        "fake",
        "--quiet",
        "--param",
        f"checks.contamination.benchmarks=[{bad_files[kind]}]",
    )
    _one_line(*run_cli(*args)[::2], str(bad_files[kind]), says)


def test_an_unknown_solver_model_is_refused_before_any_stage_runs(run_cli, settings):
    solvers = "panel.solvers=[{name: a, model: nosuch}, {name: b, baseline: bm25_reader, conditions: [search]}]"
    _one_line(
        *run_cli("generate", "--recipe", "multihop", "--n", "2", "--param", solvers)[::2], "nosuch", "not declared"
    )
    assert not (settings.home / "runs").exists() or not list((settings.home / "runs").glob("*/construct"))


def test_exports_to_an_unwritable_path_or_a_full_disk_are_one_line(run_cli, tmp_path, monkeypatch):
    assert run_cli("generate", "--recipe", "multihop", "--n", "2", "--llm", "fake", "--quiet")[0] == 0
    _one_line(
        *run_cli("export", "multihop@1", "--format", "jsonl", "--out", "/proc/synth-nowhere/out.jsonl")[::2],
        "cannot write",
    )

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("synth.store.export.sink._write_jsonl", full)
    out = tmp_path / "out.jsonl"
    _one_line(*run_cli("export", "multihop@1", "--format", "jsonl", "--out", str(out))[::2], "No space left")
    assert not out.exists() and not list(tmp_path.glob(".out.jsonl*"))

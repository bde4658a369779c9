"""The CLI as a user meets it: help everywhere, one-line errors with non-zero exits, data in JSON."""

import json
import re
import subprocess
import sys
from pathlib import Path

import click
import pytest

from synth.cli.main import cli, main

README = Path(__file__).resolve().parents[2] / "README.md"


def run(capsys, *args):
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    captured = capsys.readouterr()
    return exit_info.value.code or 0, captured.out, captured.err


def all_commands(group=cli, prefix=()):
    for name, command in group.commands.items():
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from all_commands(command, prefix + (name,))


def test_every_command_and_option_has_help_and_is_in_the_docs():
    readme = README.read_text() + "".join(page.read_text() for page in sorted((README.parent / "docs").rglob("*.md")))
    for path, command in all_commands():
        assert command.help, f"synth {' '.join(path)} has no help"
        for parameter in command.params:
            if isinstance(parameter, click.Option):
                assert parameter.help, f"synth {' '.join(path)} {parameter.opts[0]} has no help"
        if not isinstance(command, click.Group):
            assert f"synth {' '.join(path)}" in readme, f"neither README nor docs/ mention `synth {' '.join(path)}`"


def test_help_does_not_import_heavy_libraries():
    code = (
        "import sys\nfrom synth.cli.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('duckdb', 'torch', 'prefect', 'vllm', 'datasets', 'sentence_transformers', 'pyarrow', "
        "'networkx', 'pydantic') if m in sys.modules]\n"
        "print(heavy)"
    )
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize(
    "args, message",
    [
        (["generate", "--recipe", "nope"], "unknown recipe 'nope'"),
        (["generate", "--recipe", "multihop", "--param", "hops"], "malformed --param 'hops'"),
        (["generate", "--recipe", "multihop", "--param", "walk.bogus=1"], "unknown parameter 'walk.bogus'"),
        (["generate", "--recipe", "multihop", "--param", "hops=[0]"], "bad parameter 'hops'"),
        (["datasets", "show", "missing"], "no dataset named 'missing'"),
        (["sql", "select * from no_such_table"], "SQL error"),
        (["sql", "drop table versions"], "read-only"),
        (["export", "missing@2", "--format", "verl", "--out", "x.parquet"], "no dataset named 'missing'"),
    ],
)
def test_bad_input_is_one_line_and_non_zero(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code != 0
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_a_corrupted_catalog_is_one_line(capsys, tmp_path, monkeypatch):
    broken = tmp_path / "synth.duckdb"
    broken.write_bytes(b"\x00garbage" * 512)
    monkeypatch.setenv("SYNTH_CATALOG", str(broken))
    code, _, err = run(capsys, "datasets", "list")
    assert code != 0 and "cannot open catalog" in err and len(err.strip().splitlines()) == 1


def test_generate_list_show_sql_export(capsys, tmp_path):
    code, out, _ = run(
        capsys,
        "generate",
        "--recipe",
        "multihop",
        "--n",
        "6",
        "--seed",
        "1",
        "--param",
        "hops=2",
        "--param",
        "panel.enabled=false",
        "--quiet",
        "--json",
    )
    assert code == 0 and json.loads(out)["version"] == 1
    run(
        capsys,
        "generate",
        "--recipe",
        "multihop",
        "--n",
        "4",
        "--seed",
        "2",
        "--param",
        "hops=3",
        "--param",
        "panel.enabled=false",
        "--quiet",
    )

    code, out, _ = run(capsys, "datasets", "list", "--json")
    listed = json.loads(out)
    assert [(v["name"], v["version"], v["row_counts"]["items"]) for v in listed] == [
        ("multihop", 1, 6),
        ("multihop", 2, 4),
    ]
    assert all(v["kg_snapshot"].startswith("fb15k237-") and v["funnel"] for v in listed)

    code, out, _ = run(capsys, "datasets", "show", "multihop@1", "--json")
    shown = json.loads(out)
    assert shown["difficulty"] == {"unlabeled": 6} and sum(shown["hops"].values()) == 6
    assert set(shown["hops"]) <= {"1", "2"}  # effective hops: a 2-hop chain an appended cue shortens is labeled 1
    assert len(shown["examples"]) == 3

    code, out, _ = run(
        capsys, "sql", "select version, count(*) as n from items group by version order by version", "--json"
    )
    assert json.loads(out) == [{"version": 1, "n": 6}, {"version": 2, "n": 4}]
    code, out, _ = run(capsys, "sql", "select version from versions order by version", "--format", "csv")
    assert out.splitlines() == ["version", "1", "2"]

    target = tmp_path / "rl.parquet"
    code, out, _ = run(
        capsys,
        "export",
        "multihop@1",
        "--format",
        "verl",
        "--out",
        str(target),
        "--val-fraction",
        "0.5",
        "--test-fraction",
        "0",
    )
    assert code == 0 and target.exists() and (tmp_path / "rl-val.parquet").exists()
    written = int(re.search(r"wrote (\d+) rows", out).group(1))
    assert 0 < written < 6 and f"{written} train items in rl.parquet, {6 - written} validation items" in out

    code, out, _ = run(capsys, "recipes", "--json")
    assert json.loads(out)[0]["name"] == "multihop" and "hops" in json.loads(out)[0]["parameters"]


def test_version_option(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and "synth" in out


def test_recipes_params_says_what_every_key_does(run_cli):
    code, out, _ = run_cli("recipes", "--params")
    assert code == 0
    assert "Items to publish." in out and "checks.near_dup.threshold" in out and "world.retrieval_k" in out
    code, out, _ = run_cli("recipes", "--json")
    listing = {entry["name"]: entry for entry in json.loads(out)}
    descriptions = listing["selfplay"]["descriptions"]
    assert descriptions["world.corpus"].startswith("A Search-R1 JSONL corpus file")
    assert all(descriptions.values()), [key for key, text in descriptions.items() if not text]

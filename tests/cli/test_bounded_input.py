"""Hostile or careless input gets one line, fast: a YAML alias bomb in flows.yaml, a shard size of
0, a device, pipe or folder given where a file belongs (issue 37, part of item 4)."""

import os
import time

import pytest


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """~400 bytes of YAML that expand to width**levels values."""
    lines = ["l0: &l0 [" + ", ".join(["x"] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"l{level}: &l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]")
    return "\n".join(lines) + "\nflows: {}\n"


def test_a_yaml_alias_bomb_is_refused_in_a_moment(run_cli, tmp_path):
    flows = tmp_path / "flows.yaml"
    flows.write_text(alias_bomb())
    assert len(flows.read_bytes()) < 600
    started = time.monotonic()
    code, _, err = run_cli("flows", "validate", "--flows-file", str(flows))
    assert time.monotonic() - started < 10  # the expansion (10^9 values) is never walked
    assert code == 2 and "aliases expand it to more than 100,000 values" in err and len(err.strip().splitlines()) == 1


def test_a_shared_alias_within_bounds_is_still_read(run_cli, tmp_path):
    flows = tmp_path / "flows.yaml"
    flows.write_text(alias_bomb(levels=3))  # 1,000 values: a legitimate reuse of anchors
    code, _, err = run_cli("flows", "validate", "--flows-file", str(flows))
    # past the bound, to the schema, which refuses the made-up keys
    assert "expand it to more than" not in err and "l0 (line 1): unknown key" in err


def inline_alias_bomb(levels: int = 9, width: int = 10) -> str:
    """The bomb as one flow-style YAML value, as a `--param` gives it."""
    parts = ["&l0 [" + ", ".join(["x"] * width) + "]"]
    parts += [f"&l{level} [" + ", ".join([f"*l{level - 1}"] * width) + "]" for level in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


@pytest.mark.parametrize(
    "value, says",
    [(inline_alias_bomb(), "aliases expand it to more than 100,000 values"), ("&a [*a]", "recursive alias")],
)
def test_a_param_that_is_an_alias_bomb_is_refused_in_one_line(run_cli, value, says):
    """Before, only a flows file was checked: the same bomb given on the command line ran at 100% CPU to 2.4 GB."""
    code, _, err = run_cli("generate", "--recipe", "multihop", "--n", "2", "--llm", "fake", "--param", f"hops={value}")
    assert code == 2 and err.startswith("error: --param 'hops': ") and says in err
    assert len(err.strip().splitlines()) == 1


def test_a_shard_size_of_zero_is_refused(run_cli):
    code, _, err = run_cli("generate", "--recipe", "multihop", "--shard-size", "0", "--n", "2")
    assert code == 2 and "--shard-size" in err and "x>=1" in err


@pytest.mark.parametrize("kind", ["device", "folder", "pipe"])
def test_special_files_are_named_as_such(run_cli, tmp_path, monkeypatch, kind):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    if kind == "device":
        path, said = "/dev/zero", "is a character device, not a regular file"
    elif kind == "folder":
        path, said = str(tmp_path), "is a directory, not a regular file"
    else:
        path, said = str(tmp_path / "rows.jsonl"), "is a named pipe, not a regular file"
        os.mkfifo(path)
    code, _, err = run_cli("datasets", "import", path, "--format", "sft", "--name", "x")
    assert code != 0 and said in err and len(err.strip().splitlines()) == 1


def test_a_count_the_graph_cannot_make_is_refused_with_the_estimate(run_cli, tmp_path, monkeypatch):
    """Before, --n 1000000000 was accepted and construction ran without end."""
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    started = time.monotonic()
    code, _, err = run_cli("generate", "--recipe", "multihop", "--n", "1000000000", "--quiet")
    assert code == 2 and "n=1,000,000,000 is more than the graph" in err and "connected entities" in err
    assert len(err.strip().splitlines()) == 1 and time.monotonic() - started < 120

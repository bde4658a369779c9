"""`synth datasets import` and the format lists the CLI keeps without importing the store."""

import json
from pathlib import Path

from synth.cli.datasets import IMPORT_FORMATS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "trajectories"


def test_the_cli_offers_every_library_format():
    from synth.store.imports import FORMATS as IMPORTS

    assert IMPORT_FORMATS == list(IMPORTS)


def test_import_then_export(run_cli, tmp_path):
    code, out, _ = run_cli(
        "datasets", "import", str(FIXTURES / "dpo.jsonl"), "--format", "dpo", "--name", "prefs", "--json"
    )
    assert code == 0
    shown = json.loads(out)
    assert (shown["version"], shown["rows"], shown["items"], shown["trajectories"]) == ("prefs@1", 3, 2, 5)
    code, out, _ = run_cli(
        "export", "--split", "all", "prefs", "--format", "dpo", "--out", str(tmp_path / "pairs.jsonl")
    )
    assert code == 0 and "wrote 1 rows" in out and "malformed_tool_call: 2" in out and "--keep-malformed" in out
    out_all = str(tmp_path / "all-pairs.jsonl")
    code, out, _ = run_cli("export", "--split", "all", "prefs", "--format", "dpo", "--out", out_all, "--keep-malformed")
    assert code == 0 and "wrote 3 rows" in out


def test_a_bad_row_is_one_line(run_cli, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"messages": [{"role": "user", "content": "Q?"}, {"role": "tool", "content": "r"}]}\n')
    code, _, err = run_cli("datasets", "import", str(bad), "--format", "sft", "--name", "broken")
    assert code != 0 and "bad.jsonl row 1: messages[1]: a tool message needs" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err

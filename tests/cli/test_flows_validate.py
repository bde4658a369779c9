"""`synth flows validate`: a bad flows.yaml fails with one line naming the key and its line."""

import pytest
from click.testing import CliRunner

from synth.cli.main import cli

GOOD = """\
models:
  qwen:
    backend: openai
    model: Qwen3-8B
    endpoints: [http://127.0.0.1:8000/v1]
flows:
  nightly:
    recipe: multihop
    schedule: "0 3 * * *"
    params:
      n: 10
      panel:
        solvers: [{name: q, model: qwen}, {name: r, baseline: bm25_reader, conditions: [search], k: 1}]
"""


def validate(tmp_path, text):
    path = tmp_path / "flows.yaml"
    path.write_text(text)
    return CliRunner().invoke(cli, ["flows", "validate", "--flows-file", str(path)], standalone_mode=False)


def test_a_good_file_passes(tmp_path):
    result = validate(tmp_path, GOOD)
    assert result.exception is None, result.output
    assert "ok (1 flows, 1 scheduled, 1 models declared)" in result.output


@pytest.mark.parametrize(
    ("change", "key", "line", "words"),
    [
        (("    schedule:", "    shedule:"), "flows.nightly.shedule", 9, "unknown key"),
        (('"0 3 * * *"', '"0 25 * * *"'), "flows.nightly.schedule", 9, "not a valid cron expression"),
        (("model: qwen}", "model: llama}"), "flows.nightly.params.panel.solvers.0.model", 13, "unknown model 'llama'"),
        (("      n: 10", "      n: 10\n      hopz: 3"), "flows.nightly.params.hopz", 12, "unknown parameter"),
        (("    recipe: multihop", "    recipe: multihops"), "flows.nightly.recipe", 8, "unknown recipe"),
        (
            ("    endpoints: [http://127.0.0.1:8000/v1]", "    endpoint: [http://127.0.0.1:8000/v1]"),
            "models.qwen.endpoint",
            5,
            "unknown key",
        ),
    ],
)
def test_a_bad_file_names_the_key_and_line(tmp_path, change, key, line, words):
    result = validate(tmp_path, GOOD.replace(*change))
    message = str(result.exception)
    assert f"{key} (line {line})" in message and words in message and "\n" not in message

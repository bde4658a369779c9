"""No export drops every tool call with only a note: WebDancer-style rows (plain role/content turns
with Qwen `<tool_call>` blocks and `<tool_response>` user turns) keep their calls through
`--format sft`, and an export whose trajectories show tool use but would write no call is refused
unless `--allow-dropping-calls`."""

import json

import pytest

SYSTEM = (
    "You are a Web Information Seeking Master.\n\n# Tools\n\n<tools>\n"
    '{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": '
    '{"query": {"type": "array", "items": {"type": "string"}}}, "required": ["query"]}}}\n'
    '{"type": "function", "function": {"name": "visit", "parameters": {"type": "object", "properties": '
    '{"url": {"type": "array"}, "goal": {"type": "string"}}, "required": ["url", "goal"]}}}\n</tools>\n\n'
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags."
)


def webdancer_row(search: str, visit: str) -> dict:
    return {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Who founded the company that makes the Model S?"},
            {"role": "assistant", "content": f"<think>I should search.</think>\n{search}"},
            {"role": "user", "content": "<tool_response>\n1. Tesla makes the Model S.\n</tool_response>"},
            {"role": "assistant", "content": f"<think>Read the page.</think>\n{visit}"},
            {"role": "user", "content": "<tool_response>\nFounded by Martin Eberhard.\n</tool_response>"},
            {"role": "assistant", "content": "<think>Done.</think>\n<answer>Martin Eberhard</answer>"},
        ]
    }


HERMES = webdancer_row(
    '<tool_call>\n{"name": "search", "arguments": {"query": ["Model S maker"]}}\n</tool_call>',
    '<tool_call>\n{"name": "visit", "arguments": {"url": ["https://tesla.com"], "goal": "founders"}}\n</tool_call>',
)
UNKNOWN = webdancer_row(  # a dialect synth does not read: imported without calls, and said so
    '<function_call>{"name": "search", "arguments": {"query": "Model S maker"}}</function_call>',
    '<function_call>{"name": "visit", "arguments": {"url": "https://tesla.com"}}</function_call>',
)


@pytest.fixture
def imported(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))

    def import_rows(name: str, row: dict) -> str:
        source = tmp_path / f"{name}.jsonl"
        source.write_text(json.dumps(row) + "\n")
        code, out, err = run_cli("datasets", "import", str(source), "--format", "sft", "--name", name)
        assert code == 0, err
        return out

    return import_rows


def test_qwen_tool_call_text_in_sft_rows_keeps_every_call(imported, run_cli, tmp_path):
    assert "look like tool use" not in imported("hermes", HERMES)
    for fmt in ("sft", "sft-chatml", "sharegpt"):
        path = tmp_path / f"{fmt}.jsonl"
        code, _, err = run_cli("export", "hermes", "--format", fmt, "--out", str(path))
        assert code == 0, err
        text = path.read_text()
        assert '\\"name\\": \\"visit\\"' in text or '"name": "visit"' in text, fmt
        assert "https://tesla.com" in text and "Model S maker" in text, fmt


def test_an_export_that_would_drop_every_call_is_refused(imported, run_cli, tmp_path):
    assert "1 rows look like tool use in no dialect synth reads" in imported("unknown", UNKNOWN)
    for fmt in ("sft", "sft-chatml", "sharegpt"):
        path = tmp_path / f"{fmt}.jsonl"
        code, _, err = run_cli("export", "unknown", "--format", fmt, "--out", str(path))
        assert code == 2 and "would drop every tool call" in err and "--allow-dropping-calls" in err, err
        assert len(err.strip().splitlines()) == 1 and not path.exists()
        code, _, err = run_cli("export", "unknown", "--format", fmt, "--out", str(path), "--allow-dropping-calls")
        assert code == 0 and path.exists(), err

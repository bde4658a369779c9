"""Agent dialects in, every SFT format out: no tool call is lost on the way.

Each fixture in tests/fixtures/dialects/ holds rows in one dialect with the quirks real files have
(call ids repeated across turns, null content on call turns, parallel calls, the older `functions`
field, the tool specification in the first user turn, a batched search, nested answer lists). Imported and exported
in every SFT format, each row has as many tool calls out as it had in.
"""

import json
import re
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dialects"
DIALECTS = {  # fixture -> (import format, how the fixture's own rows count their calls)
    "openai": ("sft", lambda row: sum(_queries(call) for m in row["messages"] for call in m.get("tool_calls") or [])),
    "hermes": ("sft-chatml", lambda row: sum(m["content"].count("<tool_call>\n{") for m in row["messages"][1:])),
    "searchr1": ("searchr1-sft", lambda row: row["messages"][-1]["content"].count("<search>")),
    "r1searcher": ("searchr1-sft", lambda row: row["messages"][-1]["content"].count("<|begin_of_query|>")),
    "react": ("searchr1-sft", lambda row: len(re.findall(r"Action \d+: Search\[", row["messages"][-1]["content"]))),
}


def _queries(call: dict) -> int:
    """A call, or as many as the queries of a batched search (`{"query": [...]}`, WebDancer)."""
    arguments = call["function"]["arguments"]
    query = (json.loads(arguments) if isinstance(arguments, str) else arguments).get("query")
    return len(query) if isinstance(query, list) else 1


def _sharegpt_calls(row: dict) -> int:
    calls = 0
    for turn in row["conversations"]:
        if turn["from"] == "function_call":
            value = turn["value"]
            if "<tool_call>" in value:  # content before the calls: the calls in tags
                value = value.split("<tool_call>", 1)[1].rsplit("</tool_call>", 1)[0]
            body = json.loads(value)
            calls += len(body) if isinstance(body, list) else 1
    return calls


OUT = {  # export format -> how its rows count their calls
    "sft": lambda row: sum(len(m.get("tool_calls") or []) for m in row["messages"]),
    "sft-chatml": lambda row: sum(
        m["content"].count("<tool_call>") for m in row["messages"] if m["role"] == "assistant"
    ),
    "sharegpt": _sharegpt_calls,
    "searchr1-sft": lambda row: sum(
        m["content"].count("<search>") for m in row["messages"] if m["role"] == "assistant"
    ),
}


def answer_of(row: dict) -> str:
    answer = row.get("golden_answers") or row.get("answer")
    while isinstance(answer, list):
        answer = answer[0]
    return answer


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_tool_call_of_every_dialect_comes_out_of_every_sft_format(dialect, run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    fmt, count_in = DIALECTS[dialect]
    rows = [json.loads(line) for line in (FIXTURES / f"{dialect}.jsonl").read_text().splitlines()]
    calls_in = {answer_of(row): count_in(row) for row in rows}
    assert all(calls_in.values())
    code, out, err = run_cli("datasets", "import", str(FIXTURES / f"{dialect}.jsonl"), "--format", fmt, "--name", "d")
    assert code == 0, err
    assert "look like tool use" not in out
    for export_format, count_out in OUT.items():
        path = tmp_path / f"{export_format}.jsonl"
        code, _, err = run_cli("export", "--split", "all", "d", "--format", export_format, "--out", str(path))
        assert code == 0, f"{export_format}: {err}"
        exported = [json.loads(line) for line in path.read_text().splitlines()]
        assert len(exported) == len(rows), export_format
        for row in exported:
            answer = next(answer for answer in calls_in if answer in json.dumps(row))
            assert count_out(row) == calls_in[answer], (export_format, answer)


def test_the_question_of_a_chatml_row_is_the_users_question_and_its_tools_are_tools(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    code, _, err = run_cli(
        "datasets", "import", str(FIXTURES / "hermes.jsonl"), "--format", "sft-chatml", "--name", "h"
    )
    assert code == 0, err
    code, out, _ = run_cli("sql", "select question from items order by question", "--json")
    assert [row["question"] for row in json.loads(out)] == [
        "Which planet has the Great Red Spot?",
        "Which sea borders both Turkey and Ukraine?",
    ]
    code, out, _ = run_cli("sql", "select tools from trajectories", "--json")
    assert all(json.loads(row["tools"][0])["function"]["name"] == "search" for row in json.loads(out))


def test_a_row_in_no_known_dialect_is_reported_and_refused_with_strict(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    unknown = str(FIXTURES / "unknown.jsonl")
    code, out, err = run_cli("datasets", "import", unknown, "--format", "sft", "--name", "u")
    assert code == 0, err
    assert "1 rows look like tool use in no dialect synth reads" in out and "rows 1 (<function_call>)" in out
    code, _, err = run_cli("datasets", "import", unknown, "--format", "sft", "--name", "v", "--strict")
    assert code != 0 and "row 1" in err and "looks like tool use" in err and "--strict" in err


def test_nested_and_numeric_answers_are_read_as_answers(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    row = json.loads((FIXTURES / "r1searcher.jsonl").read_text())
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({**row, "answer": [["English horse race Derby"]]}) + "\n")
    code, _, err = run_cli("datasets", "import", str(path), "--format", "searchr1-sft", "--name", "a")
    assert code == 0, err
    code, out, _ = run_cli("sql", "select answer from items order by answer", "--json")
    assert [row["answer"] for row in json.loads(out)] == ["English horse race Derby"]  # not "[['English ...']]"
    code, _, err = run_cli(
        "datasets", "import", str(path), "--format", "searchr1-sft", "--name", "b", "--answer-field", "task_id"
    )
    assert code != 0 and "no `task_id` field" in err  # the row has none: a one-line error, not a traceback
    path.write_text(json.dumps({**row, "task_id": 1503}) + "\n")
    code, _, err = run_cli(
        "datasets", "import", str(path), "--format", "searchr1-sft", "--name", "c", "--answer-field", "task_id"
    )
    assert code == 0, err
    code, out, _ = run_cli("sql", "select answer from items where dataset = 'c'", "--json")
    assert json.loads(out) == [{"answer": "1503"}]
    path.write_text(json.dumps({**row, "answer": []}) + "\n")
    code, _, err = run_cli("datasets", "import", str(path), "--format", "searchr1-sft", "--name", "e")
    assert code != 0 and "`answer` holds no answer" in err


def test_search_r1s_own_example_comes_back_unchanged(run_cli, tmp_path, monkeypatch):
    """System turn, Search-R1's own prompt and its tags survive an import and an export in that format."""
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    source = FIXTURES / "searchr1_example.jsonl"
    code, _, err = run_cli("datasets", "import", str(source), "--format", "searchr1-sft", "--name", "r1")
    assert code == 0, err
    code, _, err = run_cli(
        "export", "--split", "all", "r1", "--format", "searchr1-sft", "--out", str(tmp_path / "out.jsonl")
    )
    assert code == 0, err
    exported = json.loads((tmp_path / "out.jsonl").read_text())
    assert exported["messages"] == json.loads(source.read_text())["messages"]


def test_a_batched_search_whose_results_do_not_split_stays_one_declared_call(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    row = json.loads((FIXTURES / "openai.jsonl").read_text().splitlines()[-1])
    row["messages"][2]["content"] = "Germany won the 2014 World Cup, beating Argentina in the final."
    path = tmp_path / "batch.jsonl"
    path.write_text(json.dumps(row) + "\n")
    code, _, err = run_cli("datasets", "import", str(path), "--format", "sft", "--name", "b")
    assert code == 0, err
    code, _, err = run_cli("export", "--split", "all", "b", "--format", "sft", "--out", str(tmp_path / "sft.jsonl"))
    call = json.loads((tmp_path / "sft.jsonl").read_text())["messages"][1]["tool_calls"]
    assert (
        code == 0
        and len(call) == 1
        and call[0]["function"]["arguments"]["query"]
        == row["messages"][1]["tool_calls"][0]["function"]["arguments"]["query"]
    )
    code, _, err = run_cli(
        "export", "--split", "all", "b", "--format", "searchr1-sft", "--out", str(tmp_path / "r1.jsonl")
    )
    assert code != 0 and "a batched search" in err and "malformed" not in err

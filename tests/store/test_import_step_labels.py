"""Imported trajectories in the shapes real agent data comes in (R1-Searcher's text completions,
WebDancer's Qwen-Agent ChatML with list queries and `visit`, tau-bench's tool conversations) get
step labels and the checks beyond the answer, recorded (never applied), counted in the import's
summary, and selectable with --where."""

import json
from pathlib import Path

from test_import_outcomes import TAU, r1_row

WEBDANCER_SYSTEM = (
    "You are a Web Information Seeking Master.\n\n# Tools\n\nYou may call one or more functions to assist with the "
    "user query.\n\n<tools>\n"
    + "\n".join(
        json.dumps({"type": "function", "function": {"name": name, "parameters": {"type": "object"}}})
        for name in ("search", "visit")
    )
    + "\n</tools>"
)


def webdancer_row(question: str, answer: str, searches: list[tuple[str, dict, str]], said: str) -> dict:
    """A WebDancer-style rollout: <think> then one <tool_call> per turn, results as <tool_response> user turns."""
    messages = [{"role": "system", "content": WEBDANCER_SYSTEM}, {"role": "user", "content": question}]
    for name, arguments, response in searches:
        call = json.dumps({"name": name, "arguments": arguments})
        messages.append(
            {"role": "assistant", "content": f"<think>I look this up.</think>\n<tool_call>\n{call}\n</tool_call>"}
        )
        messages.append({"role": "user", "content": f"<tool_response>\n{response}\n</tool_response>"})
    messages.append({"role": "assistant", "content": f"<think>That settles it.</think>\n<answer>{said}</answer>"})
    return {"messages": messages, "golden_answers": [answer]}


RESULTS = (
    "A Google search for 'Lake Baikal depth' found 2 results:\n\n## Web Results\n1. [Lake Baikal](https://x)\n"
    "The deepest lake."
)
WEBDANCER = [
    webdancer_row(  # searches twice alike, then reads the page that names the answer: grounded, one repeat
        "Which lake is the deepest in the world?",
        "Lake Baikal",
        [
            ("search", {"query": ["deepest lake in the world"]}, RESULTS),
            ("search", {"query": ["Deepest lake in the world"]}, RESULTS),
            ("visit", {"url": ["https://x"], "goal": "depth"}, "Lake Baikal is 1,642 m deep, the deepest lake."),
        ],
        "Lake Baikal",
    ),
    webdancer_row(  # answers a thing no result showed
        "Which river is the longest in Africa?",
        "Nile",
        [("search", {"query": ["longest river Africa"]}, "No good results were found.")],
        "Nile",
    ),
]


def imported(run_cli, tmp_path, name: str, fmt: str, rows: list) -> str:
    source = tmp_path / f"{name}.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, err = run_cli("datasets", "import", str(source), "--format", fmt, "--name", name)
    assert code == 0, err
    return out


def trajectories(run_cli, name: str) -> list[dict]:
    code, out, err = run_cli(
        "sql",
        "select step_labels, findings, answer_seen_at, num_tool_calls from trajectories "
        f"where dataset = '{name}' order by metadata",
        "--json",
    )
    assert code == 0, err
    return json.loads(out)


def test_r1_searcher_webdancer_and_tau_bench_rows_get_step_labels_and_findings(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    r1 = [
        r1_row("Who painted the Sistine Chapel ceiling?", "Michelangelo", "Michelangelo", {"score": 1}),
        r1_row("Which river flows through Vienna?", "Danube", "Rhine", {"score": 0}),
    ]
    imported(run_cli, tmp_path, "r1", "searchr1-sft", r1)
    out = imported(run_cli, tmp_path, "webdancer", "sft-chatml", WEBDANCER)
    assert "answer_not_grounded: 1" in out and "repeated_call: 1" in out and "recorded in `findings`" in out
    tau = tmp_path / "tau.json"
    tau.write_text(json.dumps(TAU))
    code, _, err = run_cli("datasets", "import", str(tau), "--format", "sft", "--name", "tau")
    assert code == 0, err

    for row in trajectories(run_cli, "r1"):  # one search each; the right answer is in its documents
        assert row["step_labels"] == ["exploration"] and row["num_tool_calls"] == 1
    right, _ = trajectories(run_cli, "r1")
    assert right["answer_seen_at"] == 1 and right["findings"] == []
    grounded, guessed = trajectories(run_cli, "webdancer")
    assert grounded["step_labels"] == ["exploration", "redundant", "exploration"]
    assert grounded["answer_seen_at"] == 1 and grounded["findings"] == ["repeated_call"]
    assert guessed["findings"] == ["answer_not_grounded"] and guessed["answer_seen_at"] is None
    for row in trajectories(run_cli, "tau"):  # the reservation lookups: every call labeled
        assert len(row["step_labels"]) == row["num_tool_calls"] >= 1

    clean = tmp_path / "clean.jsonl"
    grounded_only = "not list_contains(findings, 'answer_not_grounded')"
    code, out, err = run_cli(
        "export", "webdancer", "--format", "sft", "--out", str(clean), "--split", "all", "--where", grounded_only
    )
    assert code == 0, err
    assert "Lake Baikal" in clean.read_text() and "Nile" not in clean.read_text()


def test_with_a_graph_named_entities_no_result_showed_are_found(run_cli, tmp_path, monkeypatch):
    """`--kg`: the graph's names decide what an imported trajectory names; a leap to one no result
    showed is recorded as unseen_entity, a name the results showed is not."""
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    born = "Alice Ames was born in Springfield and directed First Light."
    rows = [
        webdancer_row(  # names Alice Ames before anything showed her
            "Which film did the director born in Springfield make?",
            "First Light",
            [("search", {"query": ["Alice Ames films"]}, born)],
            "First Light",
        ),
        webdancer_row(  # reads her name in a result first
            "Which film did the director born in Springfield make?",
            "First Light",
            [
                ("search", {"query": ["director born in Springfield"]}, born),
                ("search", {"query": ["Alice Ames"]}, born),
            ],
            "First Light",
        ),
    ]
    source = tmp_path / "leaps.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    tiny = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_kg"
    code, out, err = run_cli(
        "datasets", "import", str(source), "--format", "sft-chatml", "--name", "leaps", "--kg", str(tiny)
    )
    assert code == 0, err
    assert "unseen_entity: 1" in out
    code, out, err = run_cli(
        "sql", "select findings from trajectories where dataset = 'leaps' order by metadata", "--json"
    )
    assert [row["findings"] for row in json.loads(out)] == [["unseen_entity"], []]

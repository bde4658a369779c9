"""Importers that lose nothing quietly: conversations that go on after their answer are trimmed
to it (counted), not refused at export; a per-row score is found without `--outcome-field` and
its failed rollouts become rejected trajectories, with a line naming the field.

The fixtures have the shapes of the real files: tau-bench's result JSON (a list of
`{task_id, reward, info, traj}` whose conversations end on the simulated user's `###STOP###`, or on
a transfer call's receipt after the user asked for a human) and R1-Searcher's evaluation rows
(one text completion with its search tokens, and a `score` or nested `metrics.em`)."""

import json

SYSTEM = "# Airline Agent Policy\nYou can help users book, modify, or cancel flight reservations."


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {
        "content": None,
        "role": "assistant",
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
        ],
        "function_call": None,
    }


def result(call_id: str, name: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def tau_row(task_id: int, reward: float, user_asks: str, reply: str, tail: list[dict]) -> dict:
    lookup = call(f"call_{task_id}a", "get_reservation_details", {"reservation_id": f"ZFA04{task_id}"})
    traj = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": user_asks},
        lookup,
        result(f"call_{task_id}a", "get_reservation_details", json.dumps({"reservation_id": f"ZFA04{task_id}"})),
        {"role": "assistant", "content": reply, "tool_calls": None, "function_call": None},
        *tail,
    ]
    return {
        "task_id": task_id,
        "reward": reward,
        "info": {"task": {"user_id": "mia_li_3668"}},
        "traj": traj,
        "trial": 0,
    }


TAU = [
    tau_row(
        1,
        1.0,
        "Hi, what is the status of reservation ZFA041?",
        "Your reservation ZFA041 is confirmed for May 20 from JFK to SEA.",
        [{"role": "user", "content": "Thanks, that's all. ###STOP###"}],
    ),
    tau_row(
        2,
        0.0,
        "Hi, can I cancel reservation ZFA042?",
        "Reservation ZFA042 is a basic economy fare and cannot be cancelled under the policy.",
        [
            {"role": "user", "content": "Then I want to talk to a human agent."},
            call("call_2b", "transfer_to_human_agents", {"summary": "User wants to cancel a basic economy fare."}),
            result("call_2b", "transfer_to_human_agents", "Transfer successful"),
        ],
    ),
    tau_row(
        3,
        1.0,
        "Which seat class is reservation ZFA043?",
        "Reservation ZFA043 is in business class.",
        [],
    ),
]


def test_tau_bench_conversations_are_trimmed_to_their_answer_and_exported(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    source = tmp_path / "airline-results.json"
    source.write_text(json.dumps(TAU))
    code, out, err = run_cli("datasets", "import", str(source), "--format", "sft", "--name", "tau")
    assert code == 0, err
    assert "2 rollouts went on after their last answer" in out and "trimmed to that answer" in out
    assert "outcome read from each row's `reward`" in out and "1 rows failed by it" in out
    # the failed task has no reference answer: nothing says what is right, so it is left out, and said
    assert "left out 1 questions whose every rollout failed" in out and "rows 2" in out
    path = tmp_path / "sft.jsonl"
    code, out, err = run_cli("export", "tau", "--format", "sft", "--out", str(path))
    assert code == 0, err
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(rows) == 2
    for row in rows:
        assert row["messages"][-1]["role"] == "assistant" and "reservation" in row["messages"][-1]["content"].lower()
        assert "###STOP###" not in json.dumps(row)
    code, out, err = run_cli("sql", "select answer from items order by answer", "--json")
    assert [row["answer"] for row in json.loads(out)] == [
        "Reservation ZFA043 is in business class.",
        "Your reservation ZFA041 is confirmed for May 20 from JFK to SEA.",
    ]


R1 = "The User asks a question, and the Assistant solves it. Question: {}"


def r1_row(question: str, answer: str, said: str, outcome: dict) -> dict:
    completion = (
        f"I need to look it up. <|begin_of_query|>{question}<|end_of_query|>\n\n<|begin_of_documents|>\n"
        f"(1){answer} is the answer to it.\n<|end_of_documents|>\n\n<answer> {said} </answer>"
    )
    messages = [{"role": "user", "content": R1.format(question)}, {"role": "assistant", "content": completion}]
    return {"question": question, "answer": [answer], "messages": messages, **outcome}


def test_r1_searcher_scores_are_found_and_failed_rollouts_are_rejected(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    for name, right, wrong in (
        ("top", {"score": 1}, {"score": 0}),
        ("nested", {"metrics": {"em": 1.0}}, {"metrics": {"em": 0.0}}),
    ):
        rows = [
            r1_row("Who painted the Sistine Chapel ceiling?", "Michelangelo", "Michelangelo", right),
            r1_row("Which river flows through Vienna?", "Danube", "Rhine", wrong),
        ]
        source = tmp_path / f"{name}.jsonl"
        source.write_text("".join(json.dumps(row) + "\n" for row in rows))
        code, out, err = run_cli("datasets", "import", str(source), "--format", "searchr1-sft", "--name", name)
        assert code == 0, err
        field = "score" if name == "top" else "metrics.em"
        assert f"outcome read from each row's `{field}` (found; --outcome-field to choose): 1 rows failed" in out
        path = tmp_path / f"{name}.sft.jsonl"
        code, _, err = run_cli("export", name, "--format", "searchr1-sft", "--out", str(path))
        assert code == 0, err
        exported = path.read_text()
        assert "Michelangelo" in exported and "Rhine" not in exported

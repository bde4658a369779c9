"""`synth eval` with a scripted model that searches once and answers: the held-out split is what is
scored, figures match the answers given, a rerun sends nothing and stores nothing twice, a longer
eval sends only what is new, runs are SQL tables, and `evals list|show|compare` print them."""

import json
import re
from pathlib import Path

import pytest

from synth.errors import BudgetExhausted, ModelFailureError
from synth.evaluation.command import EvalRequest, evaluate
from synth.evaluation.report import label_trend, summarize, wilson
from synth.llm.accounting import Budget
from synth.llm.fake import ScriptedBackend
from synth.llm.models import BUILTIN_MODELS
from synth.llm.types import LLMFailure
from synth.schemas import EvalAttempt
from synth.splits import SplitFractions, split_of
from synth.store.evals import list_runs
from synth.store.publish import VersionSpec, publish_version

CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus" / "mini.jsonl"
LABELS = ("easy", "medium", "hard")


def knows_even_items(request) -> str:
    """Searches first; then answers `Film N` for even N (the town number of the question), else a wrong name."""
    last = request.messages[-1]["content"] or ""
    question = next(m["content"] for m in reversed(request.messages) if "Question:" in (m["content"] or ""))
    if "<tool_response>" not in last:
        return '<tool_call>{"name": "search", "arguments": {"query": "Grey Harbour director"}}</tool_call>'
    number = int(re.search(r"Town (\d+)", question).group(1))
    return f"<answer>Film {number}</answer>" if number % 2 == 0 else "<answer>Kelvik</answer>"


@pytest.fixture
def version(settings, make_item):
    items = [make_item(index, difficulty=LABELS[index % 3]) for index in range(60)]
    return publish_version(
        settings, VersionSpec(name="d", recipe="multihop", config={"world": {"corpus": str(CORPUS)}}), {"items": items}
    )


def run(settings, backend, **changes):
    request = EvalRequest(model="fake", **{"dataset": "d", **changes})
    return evaluate(settings, request, dict(BUILTIN_MODELS), log=lambda line: None, backends={"fake": backend})


def test_an_eval_scores_the_test_split_and_a_rerun_sends_nothing(settings, version):
    backend = ScriptedBackend(default=knows_even_items)
    outcome = run(settings, backend, test_fraction=0.3)
    test_ids = {f"item-{i}" for i in range(60) if split_of(f"item-{i}", SplitFractions(test=0.3)) == "test"}
    assert {attempt.item_id for attempt in outcome.attempts} == test_ids and outcome.run.items == len(test_ids)
    even = sum(int(item_id.split("-")[1]) % 2 == 0 for item_id in test_ids)
    assert outcome.run.pass_at_1 == pytest.approx(round(even / len(test_ids), 4))
    assert outcome.run.ci95_low < outcome.run.pass_at_1 < outcome.run.ci95_high
    assert len(backend.requests) == 2 * len(test_ids) and outcome.stored
    assert all(attempt.tool_calls == 1 and attempt.turns == 2 for attempt in outcome.attempts)
    assert outcome.run.summary["tool_calls_per_correct"] == 1 and outcome.run.summary["by_hops"]["2"]["items"]
    again = ScriptedBackend(default=knows_even_items)
    repeated = run(settings, again, test_fraction=0.3)
    assert again.requests == [] and not repeated.stored and repeated.run.id == outcome.run.id
    assert len(list_runs(settings)) == 1


def test_a_longer_eval_sends_only_the_new_items(settings, version):
    first = ScriptedBackend(default=knows_even_items)
    run(settings, first, split="all", limit=10)
    assert len(first.requests) == 20
    second = ScriptedBackend(default=knows_even_items)
    outcome = run(settings, second, split="all", limit=15)
    assert len(second.requests) == 10 and outcome.run.items == 15 and outcome.stored


def test_k_attempts_give_pass_at_k_and_a_benchmark_file_is_evaluated(settings, version, tmp_path):
    outcome = run(settings, ScriptedBackend(default=knows_even_items), split="all", limit=6, k=3)
    assert len(outcome.attempts) == 18 and {a.sample for a in outcome.attempts} == {0, 1, 2}
    assert outcome.run.pass_at_k == outcome.run.pass_at_1 == 0.5
    benchmark = tmp_path / "bench.jsonl"
    benchmark.write_text(
        "\n".join(
            json.dumps({"id": i, "question": f"Which film is from Town {i}?", "answer": f"Film {i}"}) for i in range(4)
        )
    )
    scored = run(settings, ScriptedBackend(default=knows_even_items), dataset=None, benchmark=benchmark)
    assert scored.run.source == "bench.jsonl" and scored.run.split == "all" and scored.run.pass_at_1 == 0.5
    assert scored.attempts[0].item_id == "bench.jsonl:0" and scored.attempts[0].difficulty is None


@pytest.mark.parametrize(
    "damage, says",
    [
        ('{"id": 9, "question": "Which film is from Town 9?", "answer": "Film', "row 3: not valid JSON"),
        ('["not", "an", "object"]', "row 3: not a JSON object"),
        ('{"id": 9, "answer": "Film 9"}', "row 3 has no question"),
    ],
)
def test_a_benchmark_row_that_cannot_be_read_is_refused_not_skipped(settings, tmp_path, run_cli, damage, says):
    """Before, `synth eval` skipped a broken line and scored the rest (rc 0); `datasets import` refused it."""
    rows = [json.dumps({"id": i, "question": f"Which film is from Town {i}?", "answer": f"Film {i}"}) for i in range(2)]
    benchmark = tmp_path / "bench.jsonl"
    benchmark.write_text("\n".join([*rows, damage, rows[0]]) + "\n")
    code, _, err = run_cli("eval", "fake", "--benchmark", str(benchmark), "--limit", "2")
    assert code != 0 and says in err and str(benchmark) in err and len(err.strip().splitlines()) == 1
    assert list_runs(settings) == []


def test_failing_calls_and_an_exhausted_budget_store_nothing(settings, version):
    with pytest.raises(ModelFailureError, match="stage eval"):
        run(settings, ScriptedBackend(default=LLMFailure(reason="http_503")))
    with pytest.raises(BudgetExhausted, match="stored nothing"):
        run(settings, ScriptedBackend(default=knows_even_items), budget=Budget(max_tokens=10))
    assert list_runs(settings) == []


def test_attempts_and_runs_are_sql_tables_and_the_cli_lists_shows_and_compares(settings, version, run_cli):
    one = run(settings, ScriptedBackend(default=knows_even_items), split="all", limit=12).run
    two = run(settings, ScriptedBackend(default=knows_even_items), split="all", limit=12, k=2).run
    code, out, _ = run_cli(
        "sql",
        "select e.eval_id, count(*) as n, sum(e.correct::int) as right, count(i.id) as joined from eval_attempts e "
        "left join items i on i.id = e.item_id group by e.eval_id order by n",
        "--json",
    )
    assert code == 0
    assert json.loads(out) == [
        {"eval_id": one.id, "n": 12, "right": 6, "joined": 12},
        {"eval_id": two.id, "n": 24, "right": 12, "joined": 24},
    ]
    code, out, _ = run_cli("sql", "select id, k, pass_at_1 from eval_runs order by k", "--json")
    assert [row["id"] for row in json.loads(out)] == [one.id, two.id]
    code, out, _ = run_cli("evals", "list")
    assert code == 0 and one.id in out and two.id in out
    code, out, _ = run_cli("evals", "show", one.id[:10])
    assert code == 0 and "pass@1 0.500" in out and "labels:" in out
    code, _, err = run_cli("evals", "show", "")  # before: the newest eval
    assert code != 0 and "no eval id given" in err
    code, _, err = run_cli("evals", "show", "eval-")  # a prefix of both: never a guess
    assert code != 0 and "starts 2 eval ids" in err and len(err.strip().splitlines()) == 1
    code, out, _ = run_cli("evals", "compare", one.id, two.id, "--json")
    rows = {row["figure"]: row for row in json.loads(out)}
    assert code == 0 and rows["items"] == {"figure": "items", **dict.fromkeys([*rows["items"]][1:], 12)}
    assert "label easy" in rows and "hops 2" in rows


def test_the_label_check_says_whether_accuracy_falls_from_easy_to_hard():
    def attempts(label: str, right: int, n: int = 10) -> list[EvalAttempt]:
        return [
            EvalAttempt(
                eval_id="e",
                item_id=f"{label}-{index}",
                sample=0,
                question="q?",
                gold="a",
                correct=index < right,
                match="exact" if index < right else "none",
                difficulty=label,
                finish_reason="answered",
            )
            for index in range(n)
        ]

    falling = summarize(attempts("easy", 8) + attempts("medium", 5) + attempts("hard", 1), k=1)["label_trend"]
    assert (
        falling["falls"]
        and falling["drop"] == pytest.approx(0.7)
        and "falls from easy to hard by 0.70" in falling["says"]
    )
    flat = label_trend(summarize(attempts("easy", 2) + attempts("hard", 3), k=1)["by_label"])
    assert flat["falls"] is False and "does not fall" in flat["says"]
    assert label_trend({"unlabeled": {"items": 5, "pass_at_1": 0.0}})["falls"] is None
    low, high = wilson(0, 200)
    assert low == 0.0 and 0.015 < high < 0.02

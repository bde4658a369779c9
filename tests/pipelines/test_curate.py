"""`synth curate` on data made elsewhere: an imported version checked against a question-only
benchmark, with and without the panel; failed runs imported as DPO negatives, never SFT rows."""

import json

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings

from synth.run.flows import curate_flow
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.reader import iter_records

QUESTIONS = [  # (question, answer, a rewording of it or None)
    ("Which city hosted the 1992 Summer Olympics?", "Barcelona", "The Summer Games of 1992 were held in which city?"),
    ("Who wrote the novel Pride and Prejudice?", "Jane Austen", "Pride and Prejudice was written by which novelist?"),
    ("What is the capital city of Australia?", "Canberra", "Australia's capital is which city?"),
    ("Which planet is closest to the Sun?", "Mercury", "What planet orbits nearest to the Sun?"),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci", "The Mona Lisa was painted by which artist?"),
    ("In which country is the Taj Mahal located?", "India", "The Taj Mahal stands in what country?"),
    ("What is the largest ocean on Earth?", "Pacific Ocean", "Which ocean is the biggest on the planet?"),
    ("Who discovered penicillin?", "Alexander Fleming", "Penicillin was discovered by which scientist?"),
    ("Which river flows through Cairo?", "Nile", "What river runs through the city of Cairo?"),
    ("What language is spoken in Brazil?", "Portuguese", "Brazilians speak which language?"),
    ("Which composer wrote the Four Seasons?", "Antonio Vivaldi", None),
    ("What is the chemical symbol for gold?", "Au", None),
    ("Which mountain is the tallest in Africa?", "Kilimanjaro", None),
    ("Who was the first woman to win a Nobel Prize?", "Marie Curie", None),
    ("Which country gifted the Statue of Liberty to the United States?", "France", None),
    ("What is the hardest natural substance?", "Diamond", None),
]


def rollout(question: str, answer: str) -> list[dict]:
    call = {"id": "c0", "type": "function", "function": {"name": "search", "arguments": {"query": question}}}
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": f"Doc 1(Title: {answer}) {answer} is the answer."},
        {"role": "assistant", "content": f"<answer>{answer}</answer>"},
    ]


@pytest.fixture
def imported(tmp_path, monkeypatch, run_cli):
    """16 questions imported as `imported@1`, and a benchmark file (questions only) holding 5 of them
    verbatim and 5 reworded, plus 2 unrelated questions."""
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    data = tmp_path / "data.jsonl"
    data.write_text(
        "".join(json.dumps({"messages": rollout(q, a), "golden_answers": [a]}) + "\n" for q, a, _ in QUESTIONS)
    )
    code, _, err = run_cli("datasets", "import", str(data), "--format", "sft", "--name", "imported")
    assert code == 0, err
    rows = [{"id": f"v{i}", "question": q} for i, (q, _, _) in enumerate(QUESTIONS[:5])]
    rows += [{"id": f"r{i}", "question": r} for i, (_, _, r) in enumerate(QUESTIONS[5:10])]
    rows += [
        {"id": "x1", "question": "Which element has atomic number 6?"},
        {"id": "x2", "question": "Who directed Jaws?"},
    ]
    benchmark = tmp_path / "bench.jsonl"
    benchmark.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return Settings(home=tmp_path / "home"), benchmark


def curated(settings: Settings, name: str):
    with Catalog.open(settings, read_only=True) as catalog:
        return catalog.resolve(name)


@pytest.mark.parametrize("panel", [False, True])
def test_curation_drops_verbatim_and_reworded_benchmark_questions_and_names_its_parent(imported, run_cli, panel):
    settings, benchmark = imported
    extra = ["--panel", "--llm", "fake"] if panel else []
    code, out, err = run_cli("curate", "imported@1", "--benchmark", str(benchmark), *extra, "--json", "--quiet")
    assert code == 0, err
    version = curated(settings, "imported-curated")
    assert version.parent == "imported@1" and version.recipe == "curate"
    items = list(iter_records(settings, version, "items"))
    assert sorted(item.question for item in items) == sorted(q for q, _, _ in QUESTIONS[10:])  # the rest, all kept
    dropped = [verdict for verdict in iter_records(settings, version, "verdicts") if not verdict.kept]
    assert len(dropped) == 10 and {(v.filter, v.reason) for v in dropped} == {("contamination", "contaminated")}
    assert sorted(v.details["question"] for v in dropped) == sorted(q for q, _, _ in QUESTIONS[:10])
    assert {v.details["benchmark_id"][0] for v in dropped} == {"v", "r"}
    stage = next(stage for stage in version.funnel if stage.stage == "contamination")
    assert (stage.input, stage.kept, stage.dropped) == (16, 6, {"contaminated": 10})
    trajectories = list(iter_records(settings, version, "trajectories"))
    assert {t.item_id for t in trajectories if t.role == "teacher"} == {item.id for item in items}
    if panel:
        labels = list(iter_records(settings, version, "labels"))
        assert {label.item_id for label in labels} == {item.id for item in items}
        assert all(item.difficulty != "unlabeled" for item in items)
        assert version.models["solver:embedded"] == "fake:dry-run"
    code, out, err = run_cli("datasets", "show", "imported-curated")
    assert code == 0 and "imported@1" in out and "removed" in out and "contaminated" in out
    assert "Who discovered penicillin?" in out  # the text of a dropped item


def test_a_file_is_curated_directly_and_a_rerun_publishes_nothing_twice(imported, run_cli, tmp_path):
    settings, benchmark = imported
    data = tmp_path / "data.jsonl"
    for _ in range(2):
        code, _, err = run_cli("curate", str(data), "--benchmark", str(benchmark), "--name", "direct", "--quiet")
        assert code == 0, err
    with Catalog.open(settings, read_only=True) as catalog:
        versions = catalog.versions("direct")
    assert len(versions) == 1 and versions[0].parent is None and versions[0].row_counts["items"] == 6
    assert versions[0].summary["source"] == "file data.jsonl"


def test_curation_of_a_bad_source_says_what_to_give(imported, run_cli):
    code, _, err = run_cli("curate", "nothing-here@3", "--quiet")
    assert code != 0 and "neither a file nor a published version" in err and len(err.strip().splitlines()) == 1


def test_a_failed_run_imports_as_a_rejected_trajectory_a_dpo_negative_and_never_an_sft_row(
    tmp_path, monkeypatch, run_cli
):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path / "home"))
    question, answer = QUESTIONS[0][:2]
    rows = [  # tau-bench style: the same task twice, one run rewarded, one not
        {"messages": rollout(question, answer), "golden_answers": [answer], "reward": 1.0},
        {"messages": rollout(question, "Madrid"), "golden_answers": [answer], "reward": 0.0},
    ]
    data = tmp_path / "runs.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    code, out, err = run_cli("datasets", "import", str(data), "--format", "sft", "--name", "tau")
    assert code == 0, err
    assert "outcome read from each row's `reward` (found; --outcome-field to choose): 1 rows failed by it" in out
    settings = Settings(home=tmp_path / "home")
    trajectories = list(iter_records(settings, curated(settings, "tau"), "trajectories"))
    failed = next(t for t in trajectories if t.final_answer == "Madrid")
    assert (failed.selected, failed.correct, failed.reject_reason) == (False, False, "incorrect")
    for fmt, present in (("sft", False), ("dpo", True)):
        out_file = tmp_path / f"{fmt}.jsonl"
        code, _, err = run_cli("export", "tau", "--format", fmt, "--out", str(out_file))
        assert code == 0, err
        exported = out_file.read_text()
        assert ("Madrid" in exported) is present, fmt
    pair = json.loads((tmp_path / "dpo.jsonl").read_text().splitlines()[0])
    assert "Madrid" in json.dumps(pair["rejected"]) and "Madrid" not in json.dumps(pair["chosen"])


@pytest.mark.slow  # Prefect
def test_curation_runs_as_a_prefect_flow_like_the_other_recipes(imported, prefect_server, monkeypatch):
    settings, benchmark = imported
    monkeypatch.setenv("PREFECT_API_URL", prefect_server)
    config = {"source": "imported@1", "contamination": {"benchmarks": [str(benchmark)]}}
    with temporary_settings(updates={PREFECT_API_URL: prefect_server}):
        result = curate_flow(config=config, dataset="flowed", home=str(settings.home))
    assert result["ref"] == "flowed@1" and result["items"] == 6
    assert curated(settings, "flowed").parent == "imported@1"


def test_a_newer_source_version_or_an_edited_file_is_curated_anew(imported, run_cli, tmp_path):
    settings, benchmark = imported
    data = tmp_path / "data.jsonl"
    code, _, err = run_cli("curate", "imported", "--benchmark", str(benchmark), "--quiet")
    assert code == 0, err
    code, _, err = run_cli("datasets", "import", str(data), "--format", "sft", "--name", "imported")
    assert code == 0, err  # imported@2
    code, _, err = run_cli("curate", "imported", "--benchmark", str(benchmark), "--quiet")
    assert code == 0, err
    with Catalog.open(settings, read_only=True) as catalog:
        parents = [version.parent for version in catalog.versions("imported-curated")]
    assert parents == ["imported@1", "imported@2"]  # NAME is its newest version when the run starts
    code, _, err = run_cli("curate", str(data), "--name", "file", "--quiet")
    assert code == 0, err
    question, answer = "Which metal is liquid at room temperature?", "Mercury"
    with data.open("a") as handle:  # the same path, other content: a new run, not the old result
        handle.write(json.dumps({"messages": rollout(question, answer), "golden_answers": [answer]}) + "\n")
    code, _, err = run_cli("curate", str(data), "--name", "file", "--quiet")
    assert code == 0, err
    with Catalog.open(settings, read_only=True) as catalog:
        assert [version.row_counts["items"] for version in catalog.versions("file")] == [16, 17]


def test_curated_questions_can_be_distilled_like_any_recipes(imported, run_cli):
    """`distill` is a standard section (RecipeConfig): a teacher solves the curated questions."""
    settings, benchmark = imported
    code, _, err = run_cli(
        "generate", "--recipe", "curate", "--param", "source=imported@1", "--param", "distill.enabled=true",
        "--llm", "fake", "--name", "taught", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    version = curated(settings, "taught")
    assert version.models["teacher"] == "fake:dry-run"
    distilled = version.summary["distill"]  # the dry-run teacher solves nothing: every rollout is rejected
    assert distilled["items"] == version.row_counts["items"] == 16 and distilled["rollouts"] == 16 * 4

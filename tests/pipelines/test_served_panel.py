"""The solver panel at its default settings with served reasoning models as solvers and judge:
`synth generate` against a loopback server that plays a competent agent (right with a known
probability per hop count) in each real server's response shape.

The server knows the answers of the items it is asked about (a competent model knows its world):
the test tells it the constructed items as the panel stage starts.
"""

import json
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from synth.pipelines import multihop
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))
from competent_server import DIALECTS, CompetentServer  # noqa: E402

P = {2: 0.95, 3: 0.5, 4: 0.1}
PANEL = ["panel.solvers=[{name: a, model: served-a}, {name: b, model: served-b}]", "panel.judge_model=served-a"]
"""Two served solvers and a served judge; every other panel key at its default (k, agent budget, ...)."""


def flows_file(tmp_path: Path, url: str) -> Path:
    models = {name: {"backend": "openai", "model": name, "endpoints": [url]} for name in ("served-a", "served-b")}
    path = tmp_path / "flows.yaml"
    path.write_text(json.dumps({"models": models, "flows": {}}))
    return path


@pytest.fixture
def teach_items(monkeypatch):
    """Tell the server each shard's items before the panel attempts them."""
    servers = []
    original = multihop.MultihopRecipe.attempt

    async def attempt(self, items, on_gold=None):
        for server in servers:
            server.learn(items)
        return await original(self, items, on_gold)

    monkeypatch.setattr(multihop.MultihopRecipe, "attempt", attempt)
    return servers


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_default_panel_answers_every_condition_and_labels_by_hop_count(dialect, tmp_path, teach_items):
    server = CompetentServer(dialect, p=P).start_in_thread()
    teach_items.append(server)
    try:
        settings = Settings(home=tmp_path / "home")
        result = generate(
            settings,
            "multihop",
            ["n=12", "seed=3", "hops=[2,3,4]", *PANEL],
            flows_file=flows_file(tmp_path, server.url),
        )
    finally:
        server.stop()
    version = result.version
    attempts = list(iter_records(settings, version, "attempts"))
    items = {item.id: item for item in iter_records(settings, version, "items")}
    assert len(items) == 12
    for condition in ("closed_book", "gold_evidence", "search"):
        answered = [a for a in attempts if a.condition == condition and a.solver in ("a", "b")]
        assert answered and all(a.answer is not None and a.failure is None for a in answered), condition
    assert all(a.correct for a in attempts if a.condition == "gold_evidence")  # p_gold = 1: a reader, not weak
    assert "consensus_rules_skipped" not in version.summary
    judged = version.summary["llm"]["by_stage_model"]["answer_judge/openai:served-a"]
    assert judged["requests"] > 0 and judged["failures"] == {}  # the judge answered every wrong answer it saw
    assert version.summary["search_attempts_per_item"] == 8  # two solvers x the default k=4
    assert set(version.summary["labels_possible"]) == {"easy", "medium", "hard", "unsolved"}

    rates = defaultdict(list)
    for attempt in attempts:
        if attempt.condition == "search" and attempt.item_id in items:
            rates[items[attempt.item_id].hops].append(attempt.correct)
    mean = {hops: sum(values) / len(values) for hops, values in rates.items()}
    assert mean[2] > mean[3] > mean[4], mean
    rank = {"easy": 0, "medium": 1, "hard": 2, "unsolved": 3}
    by_hops = defaultdict(list)
    for item in items.values():
        by_hops[item.hops].append(rank[item.difficulty])
    average = {hops: sum(values) / len(values) for hops, values in by_hops.items()}
    assert average[2] < average[3] < average[4], average  # easier labels on shorter chains


@pytest.mark.parametrize("dialect", ["vllm", "no_parser", "gpt_oss", "openai"])
def test_selfplay_with_a_served_model_in_every_role_publishes_items(dialect, tmp_path):
    """The proposer, the RAG judge and the panel all on the served model: before, a reasoning model
    stopped inside its thinking on the judge's short answers and no proposal was ever verified."""
    server = CompetentServer(dialect, p={searches: 0.5 for searches in range(1, 10)}).start_in_thread()
    try:
        settings = Settings(home=tmp_path / "home")
        corpus = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.jsonl"
        result = generate(
            settings,
            "selfplay",
            [
                f"world.corpus={corpus}",
                "n=4",
                "rounds=2",
                "per_round=4",
                "proposer.model=served-a",
                "rag.judge_model=served-a",
                "panel.solvers=[{name: a, model: served-a, conditions: [search]}, "
                "{name: b, model: served-b, conditions: [search]}]",
            ],
            flows_file=flows_file(tmp_path, server.url),
        )
    finally:
        server.stop()
    version = result.version
    assert version.row_counts["items"] > 0, version.funnel
    verdicts = list(iter_records(settings, version, "verdicts"))
    rag = [verdict for verdict in verdicts if verdict.filter == "rag_verification"]
    assert rag and all(verdict.kept for verdict in rag)
    proposals = [t for t in iter_records(settings, version, "trajectories") if t.role == "proposer"]
    if dialect in ("vllm", "no_parser", "gpt_oss"):
        assert all(m.reasoning_content for t in proposals for m in t.messages if m.role == "assistant")


@pytest.mark.parametrize("dialect", ["vllm", "no_parser", "harmony"])
def test_the_verbalizer_and_its_judge_answer_on_a_served_reasoning_model(dialect, tmp_path, teach_items):
    """Structured replies (the rephrasing, the judge's verdict) come after the reasoning: read from the
    final content, with room to think, every rephrasing is checked and kept."""
    server = CompetentServer(dialect, p=P).start_in_thread()
    teach_items.append(server)
    try:
        result = generate(
            Settings(home=tmp_path / "home"),
            "multihop",
            [
                "n=6",
                "seed=3",
                "hops=[2,3]",
                "verbalizer=llm",
                "generator_model=served-a",
                "rephrase_judge_model=served-b",
                *PANEL,
            ],
            flows_file=flows_file(tmp_path, server.url),
        )
    finally:
        server.stop()
    summary = result.version.summary
    assert summary["llm_rephrased"] > 0, summary
    # every reply was read (no invalid_json, no schema_mismatch) and every verdict given (no judge_*); a
    # fallback left is the verbalizer's own check of the returned text (a template question that does
    # not open with a wh-word stays a template)
    assert set(summary["template_fallbacks"]) <= {"not_a_question"}, summary["template_fallbacks"]
    judged = summary["llm"]["by_stage_model"]["rephrase_judge/openai:served-b"]
    assert judged["requests"] == summary["llm_rephrased"] and judged["failures"] == {}

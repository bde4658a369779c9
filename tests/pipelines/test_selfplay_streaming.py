"""Self-play rounds are coroutines on a streaming run's event loop: each round's proposer, RAG
verifier and panel share it, and the items of a finished round go on to the teacher while the
next round is played. Checked by the order in which the served model receives requests."""

import sys
from pathlib import Path

import pytest

from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))
from competent_server import CompetentServer  # noqa: E402
from test_served_panel import flows_file  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.jsonl"
PARAMS = [
    f"world.corpus={CORPUS}",
    "n=12",
    "rounds=2",
    "per_round=4",
    "proposer.model=served-a",  # every round's model work on served-a, the teacher alone on served-b
    "rag.judge_model=served-a",
    "panel.solvers=[{name: a, model: served-a, conditions: [search]}, "
    "{name: r, baseline: bm25_reader, conditions: [search]}]",
    "distill.enabled=true",
    "distill.teacher_model=served-b",
    "distill.n=1",
]


@pytest.mark.parametrize("staged", [False, True])
def test_round_ones_items_are_distilled_while_round_two_is_played(tmp_path, staged):
    server = CompetentServer("vllm", p={searches: 0.5 for searches in range(1, 10)}).start_in_thread()
    try:
        settings = Settings(home=tmp_path / "home")
        version = generate(
            settings, "selfplay", [*PARAMS, "seed=1"], flows_file=flows_file(tmp_path, server.url), staged=staged
        ).version
        models = [request["model"] for request in server.requests]
    finally:
        server.stop()
    rounds = version.summary["rounds"]
    assert rounds[0]["in_band"] > 0 and rounds[1]["questions"] > 0  # both rounds had work to overlap
    first_teacher = models.index("served-b")
    last_round = len(models) - 1 - models[::-1].index("served-a")  # the last request of round 2
    if staged:
        assert first_teacher > last_round  # stage after stage: the teacher waits for every round
    else:
        assert first_teacher < last_round
    teacher = [t for t in iter_records(settings, version, "trajectories") if t.role == "teacher"]
    assert {t.item_id for t in teacher} == {item.id for item in iter_records(settings, version, "items")}

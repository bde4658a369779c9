"""Realized difficulty through a whole run against a competent served model (right less often on
longer chains, following each chain hop by hop): every published item has its figures in the
`realized_difficulty` view, the answer turns up later and costs more calls as hops grow, and the
closed-book rate is what the model plants: 0 for one that never answers without searching."""

import json
import math
import sys
from pathlib import Path

import pytest

from synth.pipelines import multihop
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.query import run_query

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))
from competent_server import CompetentServer  # noqa: E402
from test_served_panel import flows_file  # noqa: E402

P = {2: 0.95, 3: 0.85, 4: 0.75}
RUN = [
    "n=36",
    "seed=11",
    "hops=[2,3,4]",
    "panel.solvers=[{name: a, model: served-a, k: 2}, {name: b, model: served-b, k: 2}]",
    "consensus.drop_trivial=false",  # a model that answers from memory keeps its items: the rate stays as planted
    "distill.enabled=true",
    "distill.teacher_model=served-a",
    "distill.n=1",
]


@pytest.fixture
def chain_following(monkeypatch):
    """Servers that learn each item before the panel sees it, with a search per hop: the title of
    that hop's evidence document, as a model that reads the chain searches it."""
    servers: list[CompetentServer] = []
    original = multihop.MultihopRecipe.attempt

    async def attempt(self, items, on_gold=None):
        corpus = self.world.corpus

        def leads(item):
            documents = [corpus.get(hop.evidence_doc_id) if hop.evidence_doc_id else None for hop in item.path]
            return [document.title if document else item.question for document in documents]

        for server in servers:
            server.learn(items, leads)
        return await original(self, items, on_gold)

    monkeypatch.setattr(multihop.MultihopRecipe, "attempt", attempt)
    return servers


def realized(tmp_path, servers, p_closed: float, name: str) -> tuple[list[dict], dict]:
    server = CompetentServer("vllm", p=P, p_closed=p_closed, p_gold=1.0).start_in_thread()
    servers.append(server)
    try:
        settings = Settings(home=tmp_path / name)
        version = generate(
            settings, "multihop", RUN, flows_file=flows_file(tmp_path, server.url), shard_size=12
        ).version
    finally:
        server.stop()
        servers.remove(server)
    result = run_query(settings, "select * from realized_difficulty order by hops, item_id")
    rows = [dict(zip(result.columns, row, strict=True)) for row in result.rows]
    return rows, version.summary["realized_difficulty"]


def slope(points: list[tuple[int, float]]) -> float:
    """Least-squares slope of y on x."""
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread


def test_realized_difficulty_grows_with_hops_and_the_closed_book_rate_is_the_planted_one(tmp_path, chain_following):
    rows, summary = realized(tmp_path, chain_following, 0.0, "searching")
    assert len(rows) == sum(figures["items"] for figures in summary.values()) >= 12  # every published item
    assert {row["hops"] for row in rows} >= {2, 3, 4}  # (and 1 where a chain's effective hops are fewer)
    for row in rows:
        assert row["closed_book_rate"] == 0.0  # it never answers without searching
        if row["calls_to_correct"] is not None:  # a correct search attempt: read from it
            assert row["tokens_to_correct"] > 0
    seen = [row for row in rows if row["answer_hit_step"] is not None]
    assert len(seen) >= len(rows) * 2 // 3  # most right answers were seen (a lucky guess is not)
    steps = [summary[str(hops)]["answer_hit_step"] for hops in (2, 3, 4)]
    calls = [summary[str(hops)]["calls_to_correct"] for hops in (2, 3, 4)]
    # A chain whose early hop's document already names the answer is seen sooner (that is what the
    # step measures), so one hop count's mean over a few items can dip: the trend is read over all.
    assert slope([(row["hops"], row["answer_hit_step"]) for row in seen]) > 0.15, json.dumps(summary)
    assert steps[0] < min(steps[1:]), json.dumps(summary)
    assert calls[0] < calls[1] < calls[2], json.dumps(summary)
    assert any(row["teacher_answer_hit_step"] is not None for row in rows)  # the teacher's correct rollouts

    rows, _ = realized(tmp_path, chain_following, 0.3, "remembering")
    rates = [row["closed_book_rate"] for row in rows]
    attempts = 4 * len(rates)  # two solvers, two closed-book samples each, per item
    spread = math.sqrt(0.3 * 0.7 / attempts)
    assert abs(sum(rates) / len(rates) - 0.3) <= 3 * spread + 0.02, rates

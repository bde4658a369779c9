"""Streaming runs (synth.run.streaming, what `synth generate` does): the version a staged run publishes,
with each item's distillation started while other items are still with the panel."""

import asyncio
import sys
import time
from pathlib import Path

import pytest

from synth.llm.fake import ScriptedBackend
from synth.llm.types import ChatRequest
from synth.pipelines import multihop
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "llm"))
from competent_server import CompetentServer  # noqa: E402
from test_served_panel import flows_file  # noqa: E402

PANEL = [
    "panel.solvers=[{name: a, model: served-a, k: 2}, {name: b, model: served-b, k: 2}]",
    "consensus.gold_calibration_items=5",
    "distill.enabled=true",
    "distill.teacher_model=served-a",
    "distill.n=2",
]


def everything(settings: Settings, version) -> dict:
    """What a version publishes, table by table, in a form two runs can be compared by."""
    rows = {}
    for table in ("items", "labels", "attempts", "trajectories", "verdicts"):
        records = [record.model_dump(mode="json") for record in iter_records(settings, version, table)]
        rows[table] = sorted(records, key=lambda record: str(sorted(record.items())))
    return {
        "rows": rows,
        "funnel": [stage.model_dump(mode="json") for stage in version.funnel],
        "difficulty": version.summary["difficulty"],
        "distill": version.summary["distill"],
    }


@pytest.fixture
def competent(monkeypatch):
    """A competent served model that knows each item's answer once the panel is given it."""
    server = CompetentServer("vllm", p={2: 0.9, 3: 0.5, 4: 0.2}, p_closed=0.15, p_gold=0.5).start_in_thread()
    original = multihop.MultihopRecipe.attempt

    async def attempt(self, items, on_gold=None):
        server.learn(items)
        return await original(self, items, on_gold)

    monkeypatch.setattr(multihop.MultihopRecipe, "attempt", attempt)
    yield server
    server.stop()


def test_a_streaming_run_publishes_what_the_staged_run_publishes(competent, tmp_path):
    made = {}
    for mode in ("staged", "streaming"):
        settings = Settings(home=tmp_path / mode)
        version = generate(
            settings,
            "multihop",
            ["n=10", "seed=7", "hops=[2,3,4]", "oversample=2", *PANEL],  # a seed whose consensus drops one
            flows_file=flows_file(tmp_path, competent.url),
            shard_size=3,
            staged=mode == "staged",
        ).version
        made[mode] = everything(settings, version)
    staged, streaming = made["staged"], made["streaming"]
    dropped = {stage["stage"]: stage["dropped"] for stage in staged["funnel"]}
    assert dropped["consensus"] and dropped["quota"]  # verdicts and the quota both decided something
    assert streaming["rows"]["trajectories"] and streaming == staged


class SlowItemBackend(ScriptedBackend):
    """The dry-run model that holds every search turn of one question until a teacher request
    arrives (or `patience_s` passes), and logs when each call ran: a run that distills an item
    while another is still with the panel releases it at once; one that waits for the whole panel
    waits out the patience."""

    def __init__(self, patience_s: float):
        super().__init__()
        self.patience_s = patience_s
        self.slow_question: str | None = None
        self.waited_out = False
        self._distilling: asyncio.Event | None = None
        self.calls: list[tuple[str, str, float, float]] = []
        """(stage, the question asked, started, ended) per request."""

    async def complete(self, requests):
        started = time.monotonic()
        if self._distilling is None:
            self._distilling = asyncio.Event()
        if any(request.stage == "distill" for request in requests):
            self._distilling.set()
        questions = [_question(request) for request in requests]
        if self.slow_question is None:
            self.slow_question = next(
                (question for request, question in zip(requests, questions) if request.stage == "solver_search"), None
            )
        if self.slow_question in questions and any(request.stage == "solver_search" for request in requests):
            try:
                await asyncio.wait_for(self._distilling.wait(), self.patience_s)
            except TimeoutError:
                self.waited_out = True
        results = await super().complete(requests)
        ended = time.monotonic()
        self.calls += [(request.stage, question, started, ended) for request, question in zip(requests, questions)]
        return results


def _question(request: ChatRequest) -> str:
    user = [message for message in request.messages if message.get("role") == "user"]
    return str(user[-1].get("content") if user else "")[-200:]


def test_an_items_distillation_starts_before_the_last_panel_attempt_of_the_run_ends(tmp_path):
    backend = SlowItemBackend(patience_s=20.0)
    settings = Settings(home=tmp_path)
    generate(
        settings,
        "multihop",
        ["n=4", "seed=2", "hops=[2]", "distill.enabled=true", "distill.n=1"],
        llm="fake",
        backends={"fake": backend},
        shard_size=2,
    )
    slow = [
        end for stage, asked, _, end in backend.calls if stage.startswith("solver") and asked == backend.slow_question
    ]
    first_distill = min(start for stage, _, start, _ in backend.calls if stage == "distill")
    assert not backend.waited_out  # a teacher request came while the slow item was still with the panel
    assert first_distill < max(slow)  # so another item was being distilled before the panel's last attempt ended


@pytest.mark.parametrize("oversample, hops", [(1.0, [2, 3, 4]), (1.5, [2, 3]), (3.0, [2, 3, 4])])
def test_an_item_the_quota_releases_early_is_always_among_those_it_publishes(tmp_path, oversample, hops):
    """`surely_chosen` at every point of a run (candidates still to come, verdicts still to give) is a
    subset of what `select` chooses from the final survivors, over random hop mixes and verdicts."""
    import random

    from synth.pipelines.context import RunContext
    from synth.pipelines.multihop import Config, MultihopRecipe, _quotas
    from synth.schemas import Item, Provenance

    n = 12
    recipe = MultihopRecipe(Config(n=n, oversample=oversample, hops=hops), RunContext(Settings(home=tmp_path)))
    released_any = False
    for trial in range(40):
        rng = random.Random(trial)
        shares = _quotas(-(-int(n * oversample * 100) // 100), hops)
        made = [hop for hop, share in shares.items() for _ in range(share)]
        rng.shuffle(made)
        made = made[: rng.randint(len(made) // 2, len(made))]  # construction may end early
        items = [
            Item(
                id=f"i{index}",
                question="q?",
                answer="a",
                recipe="multihop",
                hops=hop,
                provenance=Provenance(generator="t"),
            )
            for index, hop in enumerate(made)
        ]
        final_dropped = {item.id for item in items if rng.random() < 0.3}
        final = {item.id for item in recipe.select([item for item in items if item.id not in final_dropped], n)[0]}
        decided: set[str] = set()
        for constructed in range(1, len(items) + 1):
            known = items[:constructed]
            for item in rng.sample(known, k=len(known)):
                if rng.random() < 0.5:
                    decided.add(item.id)
            dropped = decided & final_dropped
            sure = recipe.surely_chosen(known, dropped, complete=constructed == len(items))
            kept = {item.id for item in known if item.id in decided and item.id not in final_dropped}
            assert sure & kept <= final, (trial, constructed)
            released_any |= bool(sure & kept)
        everything = recipe.surely_chosen(items, final_dropped, complete=True)
        assert everything == final  # once every verdict is in, exactly the quota's choice
    assert released_any


@pytest.mark.parametrize(
    "llm, injected, in_process",
    [("embedded", False, True), ("fake", False, False), ("embedded", True, False)],
)
def test_construction_comes_first_when_a_model_runs_in_this_process(tmp_path, llm, injected, in_process):
    """An in-process engine shares the CPU with construction: such a run constructs first."""
    from synth.run.runner import Run, RunRequest, prepare_run
    from synth.run.streaming import _serves_in_process

    settings = Settings(home=tmp_path)
    run_dir, config = prepare_run(settings, RunRequest("multihop", {"n": 2}, llm=llm))
    backends = {"embedded": ScriptedBackend()} if injected else None
    run = Run(settings, run_dir, backends=backends, config=config)
    try:
        assert _serves_in_process(run) is in_process
    finally:
        run.dir.release()

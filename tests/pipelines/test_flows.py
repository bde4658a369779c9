"""The recipe flow in process: Dask on two local workers makes the same items as the default
runner; a failed flow resumes without redoing finished shards; transient errors are retried."""

import json

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings

from synth.config import apply_params
from synth.errors import SynthError
from synth.pipelines import multihop
from synth.run.flows import multihop_flow
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.reader import iter_records

FLOWS = "models:\n  dry:\n    backend: fake\n    price: {input_per_mtok: 1.0, output_per_mtok: 2.0}\n"
PARAMS = [
    "n=8",
    "seed=4",
    "hops=[2]",
    "panel.solvers=[{name: a, model: dry, k: 1}, {name: r, baseline: bm25_reader, conditions: [search], k: 1}]",
]


@pytest.fixture(autouse=True)
def on_the_test_server(prefect_server, monkeypatch):
    """Flow runs go to the session's loopback server (no temporary server per test); the Dask
    workers, which inherit the environment, report there too."""
    monkeypatch.setenv("PREFECT_API_URL", prefect_server)
    with temporary_settings(updates={PREFECT_API_URL: prefect_server}):
        yield


@pytest.fixture
def flows_file(tmp_path):
    path = tmp_path / "flows.yaml"
    path.write_text(FLOWS)
    return str(path)


def published(home, ref_result):
    settings = Settings(home=home)
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref_result["ref"])
        run = catalog.run(ref_result["run_id"])
    items = sorted((item.id, item.question, item.difficulty) for item in iter_records(settings, version, "items"))
    return items, run


def planned(stages: list[str]) -> list[str]:
    """The plan's stages among those a run saved (without the slices of candidates construction saves)."""
    return [name for name in stages if not name.startswith("candidates-")]


def workers(home, run_id):
    return {
        json.loads(path.read_text())["meta"]["worker"] for path in (home / "runs" / run_id).glob("attempt-*/stage.json")
    }


def test_dask_on_two_workers_makes_the_same_items_as_the_default_runner(tmp_path, flows_file, prefect_server):
    default = multihop_flow(
        config=apply_params({}, PARAMS), dataset="d", flows_file=flows_file, shard_size=2, home=str(tmp_path / "a")
    )
    on_dask = multihop_flow(
        config=apply_params({}, PARAMS),
        dataset="d",
        flows_file=flows_file,
        shard_size=2,
        home=str(tmp_path / "b"),
        task_runner={"kind": "dask", "workers": 2},
    )
    default_items, default_run = published(tmp_path / "a", default)
    dask_items, dask_run = published(tmp_path / "b", on_dask)
    assert default_items and dask_items == default_items
    assert default_run.runner == "prefect:ThreadPoolTaskRunner" and dask_run.runner == "prefect:DaskTaskRunner"
    assert len(workers(tmp_path / "a", default["run_id"])) == 1
    assert len(workers(tmp_path / "b", on_dask["run_id"])) == 2  # the four shards were spread over both workers
    assert dask_run.ui_url.startswith(prefect_server.removesuffix("/api"))
    # the cost estimate covers the shards the workers ran, though publish ran elsewhere
    assert dask_run.summary["llm"]["estimated_cost_usd"] == default_run.summary["llm"]["estimated_cost_usd"] > 0


def test_models_declaring_max_parallel_shards_get_a_concurrency_limit(tmp_path):
    from prefect.client.orchestration import get_client

    from synth.run.orchestrate import apply_shard_limits

    path = tmp_path / "limited.yaml"
    path.write_text("models:\n  limited:\n    backend: fake\n    max_parallel_shards: 3\n  free:\n    backend: fake\n")
    assert apply_shard_limits(path) == {"model:limited": 3}
    with get_client(sync_client=True) as client:
        assert client.read_concurrency_limit_by_tag("model:limited").concurrency_limit == 3


class Stop(SynthError):
    """Not retryable: the flow fails at once, like a killed run."""


def test_a_failed_flow_resumes_without_redoing_finished_shards(tmp_path, flows_file, monkeypatch):
    original = multihop.MultihopRecipe.attempt
    shards = []

    async def stop_at_third(self, items):
        shards.append([item.id for item in items])
        if len(shards) == 3:
            raise Stop("stopped mid-run")
        return await original(self, items)

    monkeypatch.setattr(multihop.MultihopRecipe, "attempt", stop_at_third)
    with pytest.raises(Stop):
        multihop_flow(
            config=apply_params({}, PARAMS), dataset="d", flows_file=flows_file, shard_size=2, home=str(tmp_path)
        )
    assert len(shards) == 4  # the fourth shard was already queued and finished
    result = multihop_flow(
        config=apply_params({}, PARAMS), dataset="d", flows_file=flows_file, shard_size=2, home=str(tmp_path)
    )
    assert len(shards) == 5 and shards[4] == shards[2]  # only the failed shard ran again
    _, run = published(tmp_path, result)
    assert planned(run.resumed_stages) == ["attempt-00000", "attempt-00001", "attempt-00003", "construct"]


def test_a_transient_error_in_a_shard_is_retried(tmp_path, flows_file, monkeypatch):
    original = multihop.MultihopRecipe.attempt
    calls = []

    async def flaky_once(self, items):
        calls.append(len(items))
        if len(calls) == 2:
            raise ConnectionError("model server went away")
        return await original(self, items)

    monkeypatch.setattr(multihop.MultihopRecipe, "attempt", flaky_once)
    monkeypatch.setattr(multihop_flow, "retry_delay_seconds", 0, raising=False)
    result = multihop_flow(
        config=apply_params({}, PARAMS), dataset="d", flows_file=flows_file, shard_size=4, home=str(tmp_path)
    )
    assert calls == [4, 4, 4] and result["items"] == 8


def test_shard_tasks_are_tagged_with_the_models_they_call(tmp_path, flows_file):
    from synth.run.flows import _model_tags
    from synth.run.runner import Run, RunRequest, open_run

    settings = Settings(home=tmp_path)
    run = Run(settings, open_run(settings, RunRequest("multihop", apply_params({}, PARAMS), flows_file=flows_file)))
    assert _model_tags(run, run.recipe.stage_models("attempt")) == [
        "model:dry"
    ]  # not the generator model, which only verbalizer=llm calls
    assert _model_tags(run, run.recipe.stage_models("distill")) == ["model:embedded"]  # the default teacher
    overridden = Run(
        settings,
        open_run(settings, RunRequest("multihop", apply_params({}, PARAMS), llm="fake", flows_file=flows_file)),
    )
    assert _model_tags(overridden, overridden.recipe.stage_models("attempt")) == ["model:fake"]


def test_selfplay_rounds_and_teacher_name_the_models_they_call(tmp_path, flows_file):
    from test_selfplay import params

    from synth.run.runner import Run, RunRequest, open_run

    settings = Settings(home=tmp_path)
    values = apply_params({}, [*params(), "proposer.model=fake", "rag.judge_model=dry", "distill.teacher_model=dry"])
    run = Run(settings, open_run(settings, RunRequest("selfplay", values, flows_file=flows_file)))
    assert set(run.recipe.stage_models("round")) >= {"fake", "dry"}  # proposer, RAG judge (and the solvers)
    assert run.recipe.stage_models("distill") == ["dry"]


def _saved_order(home, run_id) -> list[str]:
    """The run's stages in the order they started (the default runner runs one task at a time)."""
    root = home / "runs" / run_id
    starts = {
        path.parent.name: json.loads(path.read_text())["meta"]["interval"][0] for path in root.glob("*/stage.json")
    }
    return sorted(starts, key=starts.__getitem__)


@pytest.mark.parametrize("staged", [False, True])
def test_a_shards_distillation_is_submitted_once_its_items_are_known_not_after_the_label(tmp_path, flows_file, staged):
    """Items are labeled one by one (multihop): once a shard's panel and the calibration shard are
    saved, its distillation goes before the label task; a staged flow waits for the label."""
    params = [*PARAMS, "distill.enabled=true", "distill.teacher_model=dry", "distill.max_turns=2"]
    params += ["consensus.gold_calibration_items=2"]  # the first shard calibrates the reader check
    result = multihop_flow(
        config=apply_params({}, params), flows_file=flows_file, shard_size=2, home=str(tmp_path), staged=staged
    )
    order = _saved_order(tmp_path, result["run_id"])
    distills = [position for position, name in enumerate(order) if name.startswith("distill-")]
    if staged:
        assert min(distills) > order.index("label")
    else:
        assert order.index("distill-00000") < order.index("label")


def test_on_dask_a_panel_shard_starts_while_construction_still_makes_candidates(tmp_path, flows_file):
    """Construction saves each slice of candidates as it makes them; the flow submits that slice's
    panel shard at once, and the other worker runs it while construction goes on."""
    params = [*PARAMS, "n=320"]  # construction long enough (~10 s) to see a slice overlap it
    result = multihop_flow(
        config=apply_params({}, params),
        flows_file=flows_file,
        shard_size=16,
        home=str(tmp_path),
        task_runner={"kind": "dask", "workers": 2},
    )
    root = tmp_path / "runs" / result["run_id"]
    meta = {path.parent.name: json.loads(path.read_text())["meta"] for path in root.glob("*/stage.json")}
    construct_end = meta["construct"]["interval"][1]
    assert "candidates-00000" in meta
    assert meta["attempt-00000"]["interval"][0] < construct_end
    assert meta["attempt-00000"]["worker"] != meta["construct"]["worker"]
    assert len(published(tmp_path, result)[0]) == 320


def test_distillation_runs_as_shard_tasks_after_the_label_task(tmp_path, flows_file):
    params = [*PARAMS, "distill.enabled=true", "distill.teacher_model=dry", "distill.n=2", "distill.max_turns=2"]
    result = multihop_flow(
        config=apply_params({}, params), dataset="d", flows_file=flows_file, shard_size=4, home=str(tmp_path)
    )
    items, run = published(tmp_path, result)
    assert planned(run.stages) == [
        "attempt-00000",
        "attempt-00001",
        "construct",
        "distill-00000",
        "distill-00001",
        "label",
    ]
    assert "candidates-00000" in run.stages  # construction saved each slice as it made it
    settings = Settings(home=tmp_path)
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(result["ref"])
    teacher = [t for t in iter_records(settings, version, "trajectories") if t.role == "teacher"]
    assert len(teacher) == 2 * len(items) and version.summary["distill"]["rollouts"] == 2 * len(items)
    assert version.models["teacher"] == "fake:dry-run"  # the declared model `dry` is the fake backend


def test_selfplay_runs_one_task_per_round_in_order_then_publishes(tmp_path, monkeypatch):
    from test_selfplay import ScriptedWorld, params

    import synth.llm.fake
    from synth.run.flows import selfplay_flow

    monkeypatch.setattr(synth.llm.fake, "dry_run_reply", ScriptedWorld("alternate"))
    result = selfplay_flow(config=apply_params({}, params()), dataset="sp", llm="fake", home=str(tmp_path))
    items, run = published(tmp_path, result)
    assert len(items) == 6 and {difficulty for _, _, difficulty in items} == {"medium"}
    assert run.stages == ["construct", "label", "round-00000", "round-00001", "round-00002"]
    from prefect import get_client

    async def round_task_runs():
        async with get_client() as client:
            runs = await client.read_task_runs()
        return [
            task_run
            for task_run in runs
            if task_run.flow_run_id
            and str(task_run.flow_run_id) == run.flow_run_id
            and task_run.name.startswith("round-")
        ]

    import asyncio

    rounds = sorted(asyncio.run(round_task_runs()), key=lambda task_run: task_run.start_time)
    assert len(rounds) == 3 and all(task_run.state_name == "Completed" for task_run in rounds)
    assert all(task_run.tags == ["model:fake"] for task_run in rounds)  # capped per model like panel shards
    assert all(earlier.end_time <= later.start_time for earlier, later in zip(rounds, rounds[1:]))  # one after another


def test_a_deployed_run_without_a_data_root_is_refused_not_lost(monkeypatch, tmp_path):
    """A process worker runs flows in a temporary folder: without SYNTH_HOME the dataset would vanish."""
    from synth.errors import ConfigError
    from synth.run.flows import worker_flows_file, worker_settings

    monkeypatch.delenv("SYNTH_HOME", raising=False)
    with pytest.raises(ConfigError, match="set SYNTH_HOME in the worker's environment"):
        worker_settings(None)
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path))
    assert worker_settings(None).home == tmp_path and worker_settings("/elsewhere").home.as_posix() == "/elsewhere"
    monkeypatch.setenv("SYNTH_FLOWS_FILE", str(tmp_path / "flows.yaml"))
    assert worker_flows_file(None) == str(tmp_path / "flows.yaml") and worker_flows_file("given.yaml") == "given.yaml"

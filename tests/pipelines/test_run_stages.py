"""A run as resumable stages: a crash in a later shard keeps the earlier ones, and the rerun
publishes the same items as an uninterrupted run without redoing them."""

import json

import pytest

from synth.config import apply_params
from synth.pipelines import multihop
from synth.run.generate import generate
from synth.run.runner import RunRequest, open_run
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.reader import iter_records

ARGS = ["n=6", "seed=3", "hops=[2]"]


class Crash(RuntimeError):
    pass


def items_of(settings, version):
    return sorted((item.id, item.difficulty) for item in iter_records(settings, version, "items"))


@pytest.mark.slow  # crashes and resumes a whole run
def test_a_crashed_run_resumes_from_its_last_finished_shard(tmp_path, monkeypatch):
    """Staged (`--staged`): a shard per call of `attempt`. A streaming run's resumption is tested by
    killing it (tests/llm/test_kill_anywhere.py)."""
    reference = generate(Settings(home=tmp_path / "clean"), "multihop", ARGS, llm="fake", shard_size=2)
    settings = Settings(home=tmp_path / "crashy")
    original = multihop.MultihopRecipe.attempt
    shards_attempted = []

    async def crash_on_third_shard(self, items):
        shards_attempted.append([item.id for item in items])
        if len(shards_attempted) == 3:
            raise Crash("killed mid-run")
        return await original(self, items)

    monkeypatch.setattr(multihop.MultihopRecipe, "attempt", crash_on_third_shard)
    with pytest.raises(Crash):
        generate(settings, "multihop", ARGS, llm="fake", shard_size=2, staged=True)
    run_dir = open_run(settings, RunRequest("multihop", apply_params({}, ARGS), llm="fake", shard_size=2))
    assert run_dir.stages() == ["attempt-00000", "attempt-00001", "construct"]
    run_dir.release()  # this test holds the run only to look at it
    with Catalog.open(settings, read_only=True) as catalog:
        failed = catalog.runs()[0]
    assert failed.status == "failed" and "killed mid-run" in failed.error

    resumed = generate(settings, "multihop", ARGS, llm="fake", shard_size=2, staged=True)
    assert len(shards_attempted) == 4  # only the third shard ran again
    assert shards_attempted[3] == shards_attempted[2]
    assert items_of(settings, resumed.version) == items_of(Settings(home=tmp_path / "clean"), reference.version)
    assert resumed.version.summary["run_id"] == run_dir.id
    with Catalog.open(settings, read_only=True) as catalog:
        run = catalog.run(run_dir.id)
    assert run.status == "published" and run.version == resumed.version.version
    assert run.resumed_stages == ["attempt-00000", "attempt-00001", "construct"]
    # the summary still counts the model calls of the shards made before the crash
    assert resumed.version.summary["llm"]["llm_requests"] == reference.version.summary["llm"]["llm_requests"]


def test_a_published_run_is_returned_not_made_again(tmp_path):
    settings = Settings(home=tmp_path)
    first = generate(settings, "multihop", [*ARGS, "panel.enabled=false"])
    second = generate(
        settings, "multihop", [*ARGS, "panel.enabled=false", "checks.near_dup.against_earlier_versions=false"]
    )
    third = generate(
        settings, "multihop", [*ARGS, "panel.enabled=false", "checks.near_dup.against_earlier_versions=false"]
    )
    assert first.version.summary["run_id"] != second.version.summary["run_id"] == third.version.summary["run_id"]
    assert third.version.ref == second.version.ref == "multihop@2"
    with Catalog.open(settings, read_only=True) as catalog:
        assert [version.version for version in catalog.versions(include_unpublished=True)] == [1, 2]


@pytest.mark.slow  # crashes and resumes a whole run
def test_a_crashed_distillation_resumes_from_its_last_finished_shard(tmp_path, monkeypatch):
    """Staged, as above: a distillation shard per call of `distill`."""
    args = [*ARGS, "distill.enabled=true", "distill.n=2", "distill.max_turns=2"]
    settings = Settings(home=tmp_path)
    original = multihop.MultihopRecipe.distill
    distilled = []

    async def crash_on_second_shard(self, items):
        distilled.append([item.id for item in items])
        if len(distilled) == 2:
            raise Crash("killed mid-distillation")
        return await original(self, items)

    monkeypatch.setattr(multihop.MultihopRecipe, "distill", crash_on_second_shard)
    with pytest.raises(Crash):
        generate(settings, "multihop", args, llm="fake", shard_size=4, staged=True)
    run_dir = open_run(settings, RunRequest("multihop", apply_params({}, args), llm="fake", shard_size=4))
    assert run_dir.stages() == ["attempt-00000", "attempt-00001", "construct", "distill-00000", "label"]
    run_dir.release()
    resumed = generate(settings, "multihop", args, llm="fake", shard_size=4, staged=True)
    assert len(distilled) == 3 and distilled[2] == distilled[1]  # only the unfinished shard ran again
    trajectories = list(iter_records(settings, resumed.version, "trajectories", "role = 'teacher'"))
    assert len(trajectories) == 6 * 2 and {t.item_id for t in trajectories} == {
        i for i, _ in items_of(settings, resumed.version)
    }
    statistics = resumed.version.summary["distill"]
    assert statistics["rollouts"] == 12 and statistics["items"] == 6 and statistics["protocol"] == "tags"
    assert sum(statistics["rejected"].values()) + statistics["accepted"] == 12
    assert resumed.version.models["teacher"] == "fake:dry-run"


def test_a_run_where_nothing_survives_publishes_nothing_and_says_where_the_candidates_went(run_cli):
    """8-hop walks from the rarest seeds dead-end or stay ambiguous: no empty version is published, the
    command exits 6 with one line naming the drop reasons, and the failed run keeps its funnel."""
    args = ["--param", "hops=[8]", "--param", "max_attempts_per_item=3", "--param", "panel.enabled=false"]
    code, out, err = run_cli("generate", "--recipe", "multihop", "--n", "2", "--quiet", *args)
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 6 and len(lines) == 1 and "no item survived (walk: dead_end" in lines[0], err
    assert "nothing was published" in lines[0]
    code, out, _ = run_cli("datasets", "list", "--all", "--json")
    assert code == 0 and json.loads(out) == []
    code, out, _ = run_cli("runs", "list", "--json")
    (run,) = json.loads(out)
    assert run["status"] == "failed" and run["funnel"][0]["dropped"]["dead_end"] >= 1


def test_run_time_is_wall_time_and_busy_time_is_reported_beside_it(tmp_path):
    """Shards that run at once overlap: the summary's seconds (and items per second) come from the
    union of the stages' wall-clock intervals, the summed stage times are busy seconds (issue 37 item 6)."""
    from synth.run.publishing import wall_seconds

    assert wall_seconds([[0, 10], [2, 5], [8, 12], [20, 25]]) == 17  # overlaps once, the pause not at all
    result = generate(Settings(home=tmp_path), "multihop", ARGS, llm="fake", shard_size=2)
    summary = result.version.summary
    assert 0 < summary["seconds"] <= summary["busy_seconds"] + 0.01
    expected = result.version.row_counts["items"] / summary["seconds"]
    assert summary["items_per_second"] == pytest.approx(expected, rel=0.02)
    stages = summary["stage_seconds"]
    assert {"construct", "attempt", "label", "publish"} <= set(stages)
    assert all(0 <= stage["wall"] <= stage["busy"] + 0.01 for stage in stages.values())

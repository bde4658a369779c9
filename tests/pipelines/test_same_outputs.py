"""The recipe layer's refactors keep what a run publishes: a small multihop run (panel and
distillation on the fake backend) and a self-play run publish the same item ids, questions,
difficulties, funnel and trajectory ids as recorded in tests/fixtures/recipe_outputs.json, and so
does every scheduler of the run's plan (streaming, staged, the Prefect flow streaming or staged).

Regenerate (only when a change is meant to alter outputs, and say why in the commit):
    python tests/pipelines/test_same_outputs.py
"""

import json
import sys
from pathlib import Path

import pytest

from synth.llm.fake import ScriptedBackend
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_selfplay import ScriptedWorld, params  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "recipe_outputs.json"
MULTIHOP = ["n=6", "seed=3", "hops=[2,3]", "distill.enabled=true", "distill.n=2"]


def published(settings: Settings, version) -> dict:
    items = list(iter_records(settings, version, "items"))
    trajectories = list(iter_records(settings, version, "trajectories"))
    return {
        "items": [[item.id, item.question, item.difficulty] for item in items],
        "funnel": [stage.model_dump(mode="json") for stage in version.funnel],
        "trajectories": sorted(trajectory.id for trajectory in trajectories),
        "rows": dict(sorted(version.row_counts.items())),
    }


def run_multihop(home: Path) -> dict:
    settings = Settings(home=home)
    return published(settings, generate(settings, "multihop", MULTIHOP, llm="fake", shard_size=2).version)


def run_selfplay(home: Path) -> dict:
    settings = Settings(home=home)
    backend = ScriptedBackend(default=ScriptedWorld("alternate"), name="dry-run")
    return published(settings, generate(settings, "selfplay", params(), llm="fake", backends={"fake": backend}).version)


@pytest.mark.parametrize("recipe", ["multihop", "selfplay"])
def test_the_same_seed_and_config_publish_what_they_published_before_the_refactor(recipe, tmp_path):
    recorded = json.loads(FIXTURE.read_text())[recipe]
    made = (run_multihop if recipe == "multihop" else run_selfplay)(tmp_path)
    assert made == recorded


@pytest.mark.parametrize("scheduler", ["staged", "flow", "flow-staged"])
def test_every_scheduler_of_the_plan_publishes_the_recorded_version(scheduler, tmp_path, prefect_server, monkeypatch):
    from prefect.settings import PREFECT_API_URL, temporary_settings

    from synth.config import apply_params
    from synth.run.flows import multihop_flow
    from synth.store.catalog import Catalog

    settings = Settings(home=tmp_path)
    if scheduler == "staged":
        version = generate(settings, "multihop", MULTIHOP, llm="fake", shard_size=2, staged=True).version
    else:
        monkeypatch.setenv("PREFECT_API_URL", prefect_server)
        with temporary_settings(updates={PREFECT_API_URL: prefect_server}):
            result = multihop_flow(
                config=apply_params({}, MULTIHOP),
                llm="fake",
                shard_size=2,
                home=str(tmp_path),
                staged=scheduler == "flow-staged",
            )
        with Catalog.open(settings, read_only=True) as catalog:
            version = catalog.resolve(result["ref"])
    assert published(settings, version) == json.loads(FIXTURE.read_text())["multihop"]


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        outputs = {"multihop": run_multihop(Path(folder) / "m"), "selfplay": run_selfplay(Path(folder) / "s")}
    FIXTURE.write_text(json.dumps(outputs, indent=1) + "\n")
    print(f"wrote {FIXTURE}: " + ", ".join(f"{name} {len(out['items'])} items" for name, out in outputs.items()))

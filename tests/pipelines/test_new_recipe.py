"""A recipe written against the base class alone (sums_recipe.py, one file) runs through
`synth generate`, a Prefect flow and a resumed crash, like the built-in ones."""

import json

import pytest
from prefect.settings import PREFECT_API_URL, temporary_settings
from sums_recipe import SumsRecipe

from synth.llm.fake import ScriptedBackend
from synth.run.flows import flow_for
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

RECIPE = "sums_recipe:SumsRecipe"


def adder(request) -> str:
    """A model that adds right, except 13 + anything."""
    words = request.messages[-1]["content"].removesuffix("?").split()
    a, b = int(words[2]), int(words[4])
    return str(a + b + (1 if 13 in (a, b) else 0))


def test_synth_generate_runs_a_recipe_given_by_import_path(run_cli, tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path))
    code, out, err = run_cli("generate", "--recipe", RECIPE, "--n", "5", "--llm", "fake", "--json", "--quiet")
    assert code == 0, err
    version = json.loads(out)
    assert (version["name"], version["version"], version["recipe"]) == ("sums", 1, RECIPE)
    assert version["row_counts"]["items"] == 5
    assert version["funnel"] == [{"stage": "made", "input": 5, "kept": 5, "dropped": {}}]
    code, out, err = run_cli("recipes", "--json")
    assert code == 0 and "sums" not in out  # `synth recipes` lists the built-in table only


def test_a_prefect_flow_runs_it(prefect_server, monkeypatch, tmp_path):
    monkeypatch.setenv("PREFECT_API_URL", prefect_server)
    with temporary_settings(updates={PREFECT_API_URL: prefect_server}):
        result = flow_for(RECIPE)(config={"n": 4, "seed": 2}, llm="fake", shard_size=2, home=str(tmp_path))
    assert result["ref"] == "sums@1" and result["items"] == 4


class Crash(RuntimeError):
    pass


@pytest.mark.parametrize("staged", [True, False], ids=["staged", "streaming"])
def test_a_crashed_run_resumes_without_sending_an_answered_request_again(tmp_path, monkeypatch, staged):
    backend = ScriptedBackend(default=adder)
    settings = Settings(home=tmp_path)
    original, calls = SumsRecipe.attempt, []

    async def crash_on_the_third_call(self, items):
        calls.append([item.id for item in items])
        if len(calls) == 3:
            raise Crash("killed")
        return await original(self, items)

    monkeypatch.setattr(SumsRecipe, "attempt", crash_on_the_third_call)
    run = {"llm": "fake", "shard_size": 2, "backends": {"fake": backend}, "staged": staged}
    with pytest.raises(Crash):
        generate(settings, RECIPE, ["n=6", "seed=1"], **run)
    answered = len(backend.requests)
    if staged:  # a shard per call: the first two shards were saved
        assert answered == 4
    result = generate(settings, RECIPE, ["n=6", "seed=1"], **run)
    if staged:
        assert len(calls) == 4 and calls[3] == calls[2]  # only the crashed shard ran again
    assert len(backend.requests) == 6  # every question was sent once, whatever the crash cut off
    items = {item.id: item for item in iter_records(settings, result.version, "items")}
    attempts = list(iter_records(settings, result.version, "attempts"))
    assert len(items) == 6 and len(attempts) == 6 and result.version.summary["llm"]["llm_requests"] == 6
    for attempt in attempts:
        expected = "easy" if attempt.correct else "unsolved"
        assert items[attempt.item_id].difficulty == expected and attempt.answer is not None

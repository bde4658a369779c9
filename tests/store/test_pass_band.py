"""RL items chosen for the policy to train: with a competent served policy (right less often as hops
grow) evaluated with `synth eval`, `--for-eval ID --pass-band LOW:HIGH` exports exactly the items
whose pass rate in that eval lies in the band, and its note's counts (below, inside, above; by hops)
are the eval's own per-item figures. Bad bands and unknown evals are one line, and nothing is written."""

import sys
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from synth.errors import ConfigError, NotFoundError
from synth.evaluation.command import EvalRequest, evaluate
from synth.llm.models import BUILTIN_MODELS, ModelSpec
from synth.search.budget import AgentBudget
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "llm"))
from competent_server import CompetentServer  # noqa: E402

CORPUS = Path(__file__).parents[1] / "fixtures" / "corpus" / "mini.jsonl"
P = {2: 0.9, 3: 0.55, 4: 0.2}
K = 4


@pytest.fixture(scope="module")
def evaluated(tmp_path_factory):
    """A version of 36 items (hops 2, 3, 4) and a k=4 eval of a served policy on all of them."""
    from synth.schemas import Item, Provenance
    from synth.settings import Settings

    settings = Settings(home=tmp_path_factory.mktemp("band"))
    items = [
        Item(
            id=f"item-{index}",
            question=f"Which film was directed by the person born in Town {index}?",
            answer=f"Film {index}",
            recipe="multihop",
            hops=(2, 3, 4)[index % 3],
            provenance=Provenance(generator="test", seed=index),
        )
        for index in range(36)
    ]
    publish_version(
        settings, VersionSpec(name="rl", recipe="multihop", config={"world": {"corpus": str(CORPUS)}}), {"items": items}
    )
    server = CompetentServer("vllm", p=P).start_in_thread()
    try:
        server.learn(items)
        models = {**BUILTIN_MODELS, "policy": ModelSpec(backend="openai", model="policy", endpoints=[server.url])}
        request = EvalRequest(model="policy", dataset="rl", split="all", k=K, agent=AgentBudget(max_turns=8))
        outcome = evaluate(settings, request, models, log=lambda line: None)
    finally:
        server.stop()
    correct = defaultdict(list)
    for attempt in outcome.attempts:
        correct[attempt.item_id].append(attempt.correct)
    rates = {item_id: sum(marks) / len(marks) for item_id, marks in correct.items()}
    return settings, outcome.run, rates, {item.id: item.hops for item in items}


def test_the_band_keeps_the_items_the_eval_put_in_it_and_the_note_counts_them(evaluated, tmp_path):
    settings, run, rates, hops = evaluated
    assert len(rates) == 36 and {rate for rate in rates.values()} - {0, 0.25, 0.5, 0.75, 1} == set()
    assert sum(rates[i] for i in rates if hops[i] == 2) > sum(
        rates[i] for i in rates if hops[i] == 4
    )  # falls with hops
    result = export_version(
        settings, "rl", "verl", tmp_path / "rl.parquet", split="all", for_eval=run.id[:8], pass_band="0.25:0.75"
    )
    kept = pq.read_table(tmp_path / "rl.parquet").column("extra_info").combine_chunks().field("item_id").to_pylist()
    inside = {item_id for item_id, rate in rates.items() if 0.25 <= rate <= 0.75}
    assert sorted(kept) == sorted(inside) and result.rows == len(inside) > 0
    place = {i: "below" if r < 0.25 else "above" if r > 0.75 else "inside" for i, r in rates.items()}
    totals = Counter(place.values())
    note = next(note for note in result.notes if note.startswith("--pass-band 0.25:0.75"))
    assert f"kept {totals['inside']} items, {totals['below']} below and {totals['above']} above left out" in note
    for h in (2, 3, 4):
        by = Counter(place[i] for i in place if hops[i] == h)
        assert f"{h}: {by['below']}/{by['inside']}/{by['above']}" in note
    assert run.id in note and "policy on rl@1" in note


def test_a_band_over_the_train_split_counts_only_that_split(evaluated, tmp_path):
    settings, run, rates, _ = evaluated
    result = export_version(settings, "rl", "jsonl", tmp_path / "rl.jsonl", for_eval=run.id, pass_band="0:1")
    note = next(note for note in result.notes if note.startswith("--pass-band 0:1"))
    assert f"kept {result.rows} items, 0 below and 0 above" in note and result.rows < len(rates)


@pytest.mark.parametrize(
    "options, error, says",
    [
        ({"pass_band": "0.1:0.9"}, ConfigError, "--pass-band needs --for-eval"),
        ({"for_eval": "RUN", "pass_band": "0.9:0.1"}, ConfigError, "need 0 <= LOW <= HIGH <= 1"),
        ({"for_eval": "RUN", "pass_band": "half"}, ConfigError, "is not LOW:HIGH"),
        ({"for_eval": "nosuchevalid", "pass_band": "0.1:0.9"}, NotFoundError, "no eval 'nosuchevalid'"),
    ],
)
def test_bad_bands_and_unknown_evals_are_one_line_and_write_nothing(evaluated, tmp_path, options, error, says):
    settings, run, _, _ = evaluated
    options = {key: run.id if value == "RUN" else value for key, value in options.items()}
    with pytest.raises(error, match=says):
        export_version(settings, "rl", "verl", tmp_path / "rl.parquet", **options)
    assert not (tmp_path / "rl.parquet").exists()


def test_for_model_runs_the_eval_once_then_finds_it_and_selects_by_it(settings, make_item, run_cli, tmp_path):
    """`--for-model M`: the eval of M on the exported split is run by the export (k samples), and a
    second export finds it stored and pays for nothing; the band then applies as with --for-eval."""
    items = [make_item(index) for index in range(12)]
    config = {"world": {"corpus": str(CORPUS)}}
    publish_version(settings, VersionSpec(name="fm", recipe="multihop", config=config), {"items": items})
    arguments = [
        "--format",
        "jsonl",
        "--split",
        "all",
        "--for-model",
        "fake",
        "--eval-samples",
        "2",
        "--pass-band",
        "0:1",
    ]
    code, out, err = run_cli("export", "fm", "--out", str(tmp_path / "a.jsonl"), *arguments)
    assert code == 0, err
    assert "(run now): pass@1" in err and "over 12 items, k=2" in err
    assert "note: --pass-band 0:1 of eval eval-" in out and "(fake on fm@1): kept 12 items" in out
    code, out, err = run_cli("export", "fm", "--out", str(tmp_path / "b.jsonl"), *arguments)
    assert code == 0 and "(found stored, nothing paid)" in err
    code, _, err = run_cli("export", "fm", "--out", str(tmp_path / "c.jsonl"), *arguments, "--for-eval", "x")
    assert code != 0 and "not both" in err

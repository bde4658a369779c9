"""`synth mix`: a mixture of a multihop version, a self-play version and an imported benchmark keeps
every source's weight within 1% and no question twice across sources (the benchmark repeats ten of
the multihop questions, in other case and punctuation); it is a version with lineage like any
other; an easy-to-hard curriculum stores its items in the key's order (label, hops, or the policy's
pass rate in an eval), in stages, and the verl export keeps that order (data.shuffle=false); asking
more than a source can give is one line."""

import json
from collections import Counter

import pyarrow.parquet as pq
import pytest

from synth.contract.matching import normalize_answer
from synth.errors import ConfigError
from synth.schemas import EvalAttempt, EvalRun
from synth.store.catalog import Catalog
from synth.store.evals import save_eval
from synth.store.export import export_version
from synth.store.imports import import_file
from synth.store.mixture import LABEL_RANK, MixRequest, mix, parse_sources
from synth.store.publish import VersionSpec, publish_version
from synth.store.reader import iter_records

LABELS = ("easy", "medium", "hard", "unsolved")


@pytest.fixture
def sources(settings, make_item, tmp_path):
    """multihop@1: 300 items; selfplay@1: 200 (other questions); bench@1: 150 imported rows, 10 of
    them multihop questions written differently."""
    multihop = [make_item(i, hops=2 + i % 3, difficulty=LABELS[i % 4], path=[], constraints=[]) for i in range(300)]
    selfplay = [
        make_item(1000 + i, question=f"Which proposal names Harbour {i}?", recipe="selfplay", difficulty=LABELS[i % 4])
        for i in range(200)
    ]
    publish_version(settings, VersionSpec(name="multihop", recipe="multihop"), {"items": multihop})
    publish_version(settings, VersionSpec(name="selfplay", recipe="selfplay"), {"items": selfplay})
    rows = [(f"Which benchmark question {i}?", f"Answer {i}") for i in range(140)]
    rows += [(multihop[i].question.upper().rstrip("?") + " ?", multihop[i].answer) for i in range(10)]
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        "\n".join(
            json.dumps(
                {
                    "messages": [
                        {"role": "user", "content": q},
                        {"role": "assistant", "content": f"<answer>{a}</answer>"},
                    ]
                }
            )
            for q, a in rows
        )
    )
    import_file(settings, bench, "sft", "bench")
    return settings


def _items(settings, ref):
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref)
    return version, list(iter_records(settings, version, "items"))


def test_weights_hold_within_one_percent_and_no_question_is_there_twice(sources):
    request = MixRequest("rl-mix", parse_sources(["multihop@1=5", "selfplay@1=3", "bench=2"]), n=400, seed=7)
    version = mix(sources, request, log=lambda line: None)
    version, items = _items(sources, version.ref)
    shares = Counter(item.metadata["mix"]["source"] for item in items)
    assert len(items) == 400
    for ref, weight in (("multihop@1", 0.5), ("selfplay@1", 0.3), ("bench@1", 0.2)):
        assert abs(shares[ref] / 400 - weight) <= 0.01, shares
    questions = [normalize_answer(item.question) for item in items]
    assert len(set(questions)) == len(questions) and len({item.id for item in items}) == len(items)
    assert version.summary["mix"]["bench@1"]["duplicates_left_out"] == 10  # the repeated multihop questions
    assert [source["ref"] for source in version.config["mix"]["sources"]] == ["multihop@1", "selfplay@1", "bench@1"]
    assert version.recipe == "mix" and version.parent == "multihop@1"
    assert {item.difficulty for item in items if item.metadata["mix"]["source"] == "multihop@1"} <= set(LABELS)


def test_too_many_items_for_a_source_is_one_line_and_publishes_nothing(sources):
    request = MixRequest("rl-mix", parse_sources(["multihop=0.5", "selfplay=0.5"]), n=500)
    with pytest.raises(ConfigError, match=r"--n 500 needs 250 items of selfplay@1 .* which has 200 .* at most 400"):
        mix(sources, request, log=lambda line: None)
    with Catalog.open(sources, read_only=True) as catalog:
        assert catalog.versions("rl-mix") == []


@pytest.mark.parametrize("text", ["multihop", "multihop=0", "multihop=-1", "multihop=x"])
def test_a_source_without_a_positive_weight_is_one_line(text):
    with pytest.raises(ConfigError, match="NAME\\[@VERSION\\]=WEIGHT"):
        parse_sources([text])


@pytest.mark.parametrize("by", ["label", "hops"])
def test_an_easy_to_hard_curriculum_is_stored_and_exported_in_order(sources, tmp_path, by):
    request = MixRequest("curriculum", parse_sources(["multihop=1"]), n=120, order="easy-to-hard", by=by, stages=3)
    version = mix(sources, request, log=lambda line: None)
    _, items = _items(sources, version.ref)
    stages = [item.metadata["mix"]["stage"] for item in items]
    assert stages == sorted(stages) and Counter(stages) == {0: 40, 1: 40, 2: 40}
    key = (lambda item: LABEL_RANK[item.difficulty]) if by == "label" else (lambda item: item.hops)
    for earlier, later in zip(
        range(3), range(1, 3), strict=False
    ):  # every item of a stage is no harder than the next's
        assert max(key(i) for i in items if i.metadata["mix"]["stage"] == earlier) <= min(
            key(i) for i in items if i.metadata["mix"]["stage"] == later
        )
    result = export_version(sources, version.ref, "verl", tmp_path / "rl.parquet", split="all")
    assert any("data.shuffle=false" in note for note in result.notes)
    exported = pq.read_table(tmp_path / "rl.parquet").column("extra_info").combine_chunks().field("item_id").to_pylist()
    assert exported == [item.id for item in items]


def test_a_curriculum_by_the_policys_pass_rate_puts_what_it_solves_first(sources):
    _, multihop = _items(sources, "multihop")
    rate = {item.id: (index % 5) / 4 for index, item in enumerate(multihop)}  # 0, .25, ..., 1 as the eval found
    attempts = [
        EvalAttempt(
            eval_id="eval-policy",
            item_id=item_id,
            sample=sample,
            question="q",
            gold="g",
            correct=sample < rate[item_id] * 4,
            match="exact",
            finish_reason="answered",
        )
        for item_id in rate
        for sample in range(4)
    ]
    run = EvalRun(
        id="eval-policy",
        created_at="2026-11-27T00:00:00Z",
        model="policy",
        model_id="policy",
        source="multihop@1",
        split="all",
        k=4,
        items=len(rate),
        pass_at_1=0.5,
        pass_at_k=0.8,
        ci95_low=0.4,
        ci95_high=0.6,
    )
    save_eval(sources, run, attempts)
    request = MixRequest(
        "by-rate", parse_sources(["multihop=1"]), n=100, order="easy-to-hard", by="pass-rate", for_eval="eval-policy"
    )
    version = mix(sources, request, log=lambda line: None)
    _, items = _items(sources, version.ref)
    rates = [rate[item.id] for item in items]
    assert rates == sorted(rates, reverse=True) and version.summary["never_tried"] == 0
    with pytest.raises(ConfigError, match="--by pass-rate needs --for-eval"):
        mix(sources, MixRequest("x", parse_sources(["multihop=1"]), order="easy-to-hard", by="pass-rate"))


def test_the_command_publishes_the_mixture_and_says_how_to_export_it(sources, run_cli):
    code, out, err = run_cli("mix", "cli-mix", "multihop=0.6", "selfplay=0.4", "--n", "50", "--order", "easy-to-hard")
    assert code == 0, err
    assert "published cli-mix@1: 50 items from 2 sources (multihop@1 30 (60.0% for weight 60.0%)" in out
    assert "synth export cli-mix@1 --format verl" in out
    code, _, err = run_cli("mix", "cli-mix", "multihop=0.5", "--by", "pass-rate", "--order", "easy-to-hard")
    assert code != 0 and "--by pass-rate needs --for-eval" in err and len(err.strip().splitlines()) == 1

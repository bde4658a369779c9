"""The LLM verbalizer keeps a rephrasing only when it is safe, and the recipe records what it did."""

import asyncio
import json
from pathlib import Path

from synth.generate import generate
from synth.generators.llm_verbalizer import LLMVerbalizer
from synth.llm.client import LLMClient
from synth.llm.fake import ScriptedBackend
from synth.llm.types import LLMFailure
from synth.store.reader import iter_records

def name(entity_id: str) -> str:
    """Names of conftest's make_item entities: /m/town3 -> "Town 3"."""
    stem = entity_id.rsplit("/", 1)[-1]
    kind = stem.rstrip("0123456789")
    return f"{kind.capitalize()} {stem[len(kind):]}"


def rephrase(items, *replies):
    backend = ScriptedBackend([json.dumps({"question": reply}) if isinstance(reply, str) else reply for reply in replies])
    verbalizer = LLMVerbalizer(LLMClient(backend), name)
    phrased, report = asyncio.run(verbalizer.rephrase(items))
    return phrased, report, backend


def test_a_safe_rephrasing_replaces_the_template_and_keeps_it_in_metadata(make_item):
    item = make_item(0)
    [phrased], report, backend = rephrase([item], "Which film was directed by someone born in Town 0?")
    assert phrased.question == "Which film was directed by someone born in Town 0?"
    assert phrased.metadata["template_question"] == item.question
    assert phrased.provenance.verbalizer == "llm:fake:fake" and phrased.provenance.models["generator"] == "fake:fake"
    assert report.rephrased == 1 and not report.fallbacks
    request = backend.requests[0]
    assert item.question in request.messages[1]["content"] and "Town 0" in request.messages[1]["content"]
    assert request.json_schema is not None and request.stage == "verbalize"


def test_unsafe_or_failed_rephrasings_fall_back_to_the_template_with_a_reason(make_item):
    items = [make_item(index) for index in range(6)]
    replies = [
        "Which movie was made by someone born somewhere?",          # drops the Town cue
        "Which movie, Film 1, was made by someone born in Town 1?",  # names the answer
        "Which movie was made by Person 2, born in Town 2?",        # names the hidden director
        "Is Film 3 directed by someone born in Town 3?",            # yes/no, not a wh-question
        "Which film comes from Town 4?",                            # keeps the anchor, drops the facts
        LLMFailure(reason="timeout"),
    ]
    phrased, report, _ = rephrase(items, *replies)
    assert [item.question for item in phrased] == [item.question for item in items]
    assert report.rephrased == 0
    assert report.fallbacks == {"lost_content": 1, "dropped_cue": 1, "answer_in_question": 1, "intermediate_in_question": 1,
                                "not_a_question": 1, "timeout": 1}


def test_the_recipe_with_llm_verbalizer_runs_on_the_fake_and_records_it(tmp_path, settings):
    flows = tmp_path / "flows.yaml"
    flows.write_text("models:\n  scripted:\n    backend: fake\n    model: writer\n")
    result = generate(settings, "multihop", ["n=6", "seed=1", "verbalizer=llm", "generator_model=scripted", "panel.enabled=false"], flows_file=flows)
    summary = result.version.summary
    assert summary["verbalizer"] == "llm:fake:writer"
    assert summary["llm"]["llm_requests"] >= 6 and summary["template_fallbacks"]  # filler replies never pass
    assert result.version.models == {"generator": "fake:writer"}
    items = list(iter_records(settings, result.version, "items"))
    assert len(items) == 6 and all(item.question.endswith(("?", ".")) for item in items)


def test_llm_flag_overrides_every_role(tmp_path, settings):
    result = generate(settings, "multihop", ["n=3", "verbalizer=llm"], llm="fake", flows_file=Path(tmp_path / "none.yaml"))
    assert result.version.models == {"generator": "fake:dry-run", "solver:embedded": "fake:dry-run", "solver:bm25_reader": "baseline:bm25-reader"}
    # the dry-run filler answers nothing right: too weak a panel to judge answerability, so every item stays, unsolved
    assert "unanswerable_with_gold_evidence" in result.version.summary["consensus_rules_skipped"]
    assert result.version.summary["difficulty"] == {"unsolved": 3}

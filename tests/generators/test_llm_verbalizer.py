"""The LLM verbalizer keeps a rephrasing only when it is safe, and the recipe records what it did."""

import asyncio
import json
from pathlib import Path

from synth.generators.llm_verbalizer import LLMVerbalizer
from synth.generators.rephrase_judge import RephraseJudge
from synth.llm.client import LLMClient
from synth.llm.fake import ScriptedBackend
from synth.llm.types import LLMFailure
from synth.run.generate import generate
from synth.schemas import Cue
from synth.store.reader import iter_records


def name(entity_id: str) -> str:
    """Names of conftest's make_item entities: /m/town3 -> "Town 3"."""
    stem = entity_id.rsplit("/", 1)[-1]
    kind = stem.rstrip("0123456789")
    return f"{kind.capitalize()} {stem[len(kind) :]}"


def rephrase(items, *replies):
    backend = ScriptedBackend(
        [json.dumps({"question": reply}) if isinstance(reply, str) else reply for reply in replies]
    )
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
        "Which movie was made by someone born somewhere?",  # drops the Town cue
        "Which movie, Film 1, was made by someone born in Town 1?",  # names the answer
        "Which movie was made by Person 2, born in Town 2?",  # names the hidden director
        "Is Film 3 directed by someone born in Town 3?",  # yes/no, not a wh-question
        "Which film comes from Town 4?",  # keeps the anchor, drops the facts
        LLMFailure(reason="timeout"),
    ]
    phrased, report, _ = rephrase(items, *replies)
    assert [item.question for item in phrased] == [item.question for item in items]
    assert report.rephrased == 0
    assert report.fallbacks == {
        "lost_content": 1,
        "dropped_cue": 1,
        "answer_in_question": 1,
        "intermediate_in_question": 1,
        "not_a_question": 1,
        "timeout": 1,
    }


def judged(items, rephrasings, verdicts):
    writer = ScriptedBackend([json.dumps({"question": text}) for text in rephrasings], name="writer")
    judge = ScriptedBackend(
        [reply if isinstance(reply, (str, LLMFailure)) else json.dumps(reply) for reply in verdicts], name="judge"
    )
    verbalizer = LLMVerbalizer(LLMClient(writer), name, judge=RephraseJudge(LLMClient(judge)))
    phrased, report = asyncio.run(verbalizer.rephrase(items))
    return phrased, report, judge


def test_a_judge_model_confirms_each_rephrasing_that_passes_the_checks(make_item):
    """A rewrite that keeps every word can still change the meaning (born -> died): the judge says no
    and the template stays, with the rejected rewrite and the judge's reason kept for SQL."""
    cue = Cue(text="was directed by a person born in Town {}", constraint=0, candidates=2)
    items = [make_item(index, cues=[cue.model_copy(update={"text": cue.text.format(index)})]) for index in range(4)]
    rephrasings = [
        "Which film was directed by someone born in Town 0?",
        "Which film was directed by someone who died in Town 1?",  # passes every textual check
        "Which film was directed by a person born in Town 2?",
        "Which movie was made by someone born somewhere?",  # dropped_cue: never reaches the judge
    ]
    verdicts = [
        {"equivalent": True, "problem": ""},
        {"equivalent": False, "problem": "born became died"},
        "not json at all",
        "nor is the retry",
    ]
    phrased, report, judge = judged(items, rephrasings, verdicts)
    assert [item.question for item in phrased] == [
        rephrasings[0],
        items[1].question,
        items[2].question,
        items[3].question,
    ]
    assert report.rephrased == 1 and report.judged == 3
    assert report.fallbacks == {"judge_not_equivalent": 1, "judge_invalid_json": 1, "dropped_cue": 1}
    assert phrased[0].provenance.models == {"generator": "fake:writer", "rephrase_judge": "fake:judge"}
    assert phrased[1].metadata["rephrasing_rejected"] == {
        "rephrasing": rephrasings[1],
        "reason": "judge_not_equivalent",
        "problem": "born became died",
    }
    assert phrased[3].metadata["rephrasing_rejected"]["reason"] == "dropped_cue"
    asked = [request.messages[1]["content"] for request in judge.requests]
    assert len({text.split("Rewrite: ")[1] for text in asked}) == 3  # one request per passing rewrite (a retry re-asks)
    assert all("Film 1" not in text for text in asked)  # the judge never sees the answer
    first = next(text for text in asked if text.endswith(rephrasings[1]))
    assert items[1].question in first and "- was directed by a person born in Town 1" in first
    assert all(request.sampling.temperature == 0.0 and request.json_schema is not None for request in judge.requests)


def test_the_recipe_with_llm_verbalizer_runs_on_the_fake_and_records_it(tmp_path, settings):
    flows = tmp_path / "flows.yaml"
    flows.write_text("models:\n  scripted:\n    backend: fake\n    model: writer\n")
    result = generate(
        settings,
        "multihop",
        [
            "n=6",
            "seed=1",
            "verbalizer=llm",
            "generator_model=scripted",
            "panel.enabled=false",
            "rephrase_judge_model=scripted",
        ],
        flows_file=flows,
    )
    summary = result.version.summary
    assert summary["verbalizer"] == "llm:fake:writer"
    assert summary["llm"]["llm_requests"] >= 6 and summary["template_fallbacks"]  # filler replies never pass
    assert summary["rephrasings_judged"] == 0  # nothing passed the textual checks, so nothing was judged
    assert result.version.models == {"generator": "fake:writer", "rephrase_judge": "fake:writer"}
    items = list(iter_records(settings, result.version, "items"))
    assert len(items) == 6 and all(item.question.endswith(("?", ".")) for item in items)


def test_llm_flag_overrides_every_role(tmp_path, settings):
    result = generate(
        settings, "multihop", ["n=3", "verbalizer=llm"], llm="fake", flows_file=Path(tmp_path / "none.yaml")
    )
    assert result.version.models == {
        "generator": "fake:dry-run",
        "solver:embedded": "fake:dry-run",
        "solver:bm25_reader": "baseline:bm25-reader",
    }
    # the dry-run filler answers nothing right: too weak a panel to judge answerability, so every item stays
    # (labeled by what the extractive bm25 reader alone finds)
    assert "unanswerable_with_gold_evidence" in result.version.summary["consensus_rules_skipped"]
    assert sum(result.version.summary["difficulty"].values()) == 3

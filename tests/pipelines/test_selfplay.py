"""Recipe `selfplay` end to end on a scripted model and an external Search-R1 corpus: what is
published, and how the requested search depth follows the solver across rounds."""

import json
import re
import zlib
from collections import Counter
from pathlib import Path

import pytest

import synth.llm.fake
from synth.errors import NothingSurvived
from synth.llm.fake import ScriptedBackend
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.reader import iter_records
from synth.store.workdir import RunDir

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.jsonl"
SOLVERS = (
    "panel.solvers=[{name: a, model: fake, conditions: [search], k: 2}, "
    "{name: b, model: fake, conditions: [search], k: 2}]"
)


def last_user(request, prefix: str) -> str:
    return next(
        m["content"] for m in reversed(request.messages) if m["role"] == "user" and m["content"].startswith(prefix)
    )


class ScriptedWorld:
    """Plays every role by request stage. The proposer (json protocol: the fake backend has no tool
    channel) searches words of the target's document (never its name) as often as asked, then
    proposes a question; the RAG judge answers only when
    the target's document is among those shown; solvers follow `policy`."""

    def __init__(self, policy: str):
        self.policy = policy
        self.answers: dict[str, str] = {}
        self.solver_calls: Counter = Counter()

    def __call__(self, request):
        if request.stage == "propose":
            return self.propose(request)
        if request.stage == "rag_gold_evidence":
            question = last_user(request, "Documents:").rsplit("Question: ", 1)[1]
            answer = self.answers[question]
            return answer if f"(Title: {answer})" in request.messages[-1]["content"] else "I cannot tell"
        if request.stage == "solver_search":
            question = last_user(request, "Question:").removeprefix("Question: ")
            self.solver_calls[question] += 1
            right = {"always": True, "never": False, "alternate": self.solver_calls[question] % 2 == 1}[self.policy]
            return f"<answer>{self.answers[question] if right else 'Nobody Knows'}</answer>"
        raise AssertionError(f"unexpected stage {request.stage}")

    def propose(self, request):
        task = last_user(request, "Target answer:")
        answer = re.search(r"Target answer: (.*)", task).group(1)
        searches = int(re.search(r"Make (\d+) different searches", task).group(1))
        document = re.search(r"What the collection says about it: (.*)", task).group(1)
        words = [w for w in re.findall(r"[A-Za-z]{4,}", document) if w.lower() not in answer.lower()]
        turn = request.sampling.seed % 1000
        if turn < searches:
            return json.dumps({"name": "search", "arguments": {"query": " ".join(words[turn : turn + 2])}})
        question = f"Which title is behind clue number {zlib.crc32(answer.encode()) % 100000} of depth {searches}?"
        self.answers[question] = answer
        return json.dumps({"name": "propose", "arguments": {"question": question}})


@pytest.fixture
def world(monkeypatch):
    """`world(policy)`: a ScriptedWorld, also answering for the fake model of runs started from the
    command line (which cannot take a backend object; library calls get `backends=backends_of(world)`)."""

    def make(policy):
        scripted = ScriptedWorld(policy)
        monkeypatch.setattr(synth.llm.fake, "dry_run_reply", scripted)
        return scripted

    return make


def backends_of(reply) -> dict:
    """The backends of a run whose fake model answers with `reply`."""
    return {"fake": ScriptedBackend(default=reply, name="dry-run")}


def params(*extra):
    return [f"world.corpus={CORPUS}", "n=6", "rounds=3", "per_round=4", SOLVERS, *extra]


def test_an_external_corpus_given_on_the_command_line_yields_a_published_selfplay_version(
    world, run_cli, tmp_path, monkeypatch
):
    world("alternate")
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path))
    args = [arg for param in params() for arg in ("--param", param)]
    code, out, err = run_cli("generate", "--recipe", "selfplay", *args, "--llm", "fake", "--json", "--quiet")
    assert code == 0, err
    version = json.loads(out)
    assert version["kg_snapshot"].startswith("jsonl:mini.jsonl@") and version["recipe"] == "selfplay"
    settings = Settings(home=tmp_path)
    from synth.schemas import DatasetVersion

    version = DatasetVersion.model_validate(version)
    items = list(iter_records(settings, version, "items"))
    trajectories = list(iter_records(settings, version, "trajectories"))
    verdicts = list(iter_records(settings, version, "verdicts"))
    assert len(items) == 6  # 12 proposals, every one verified and in band (success 1/2), 6 over quota
    assert {item.difficulty for item in items} == {"medium"}
    documents = {json.loads(line)["id"] for line in CORPUS.read_text().splitlines()}
    for item in items:
        assert item.recipe == "selfplay" and set(item.evidence_doc_ids) <= documents
        rag = next(v for v in verdicts if v.item_id == item.id and v.filter == "rag_verification")
        assert (
            rag.kept and rag.details["documents"] == item.evidence_doc_ids and rag.details["answers"] == [item.answer]
        )
    roles = Counter(t.role for t in trajectories)
    assert roles["proposer"] == 12 and roles["solver"] == 12 * 4
    published_proposals = [t for t in trajectories if t.role == "proposer" and t.item_id in {item.id for item in items}]
    assert all(t.reject_reason is None and t.metadata["reward"] == 0.5 for t in published_proposals)
    rounds = version.summary["rounds"]
    assert [r["targets"] for r in rounds] == [4, 4, 4] and all(r["rag_verified"] == 4 for r in rounds)
    assert [stage.stage for stage in version.funnel][:2] == ["proposal", "format"] and version.funnel[-1].dropped == {
        "over_quota": 6
    }

    # the proposals whose question passed every gate are SFT data for a proposer
    out = tmp_path / "proposer.jsonl"
    code, out_text, err = run_cli(
        "export", "--split", "all", "selfplay", "--format", "sft", "--role", "proposer", "--out", str(out)
    )
    assert code == 0, err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 12 and {row["trajectory_id"] for row in rows} == {
        t.id for t in trajectories if t.role == "proposer"
    }
    for row in rows:  # under the default contract: the proposer's text prompt, the question in <question> tags
        assert (
            row["messages"][0]["content"].startswith("You write hard quiz questions")
            and "<question>" in row["messages"][0]["content"]
        )
        assert row["messages"][1]["content"].startswith("Target answer:")
        assert row["messages"][-1]["role"] == "assistant" and row["messages"][-1]["content"].endswith("</question>")
        assert [tool["function"]["name"] for tool in row["tools"]] == ["search", "open"]
    code, _, _ = run_cli(
        "export",
        "selfplay",
        "--format",
        "sft",
        "--role",
        "proposer",
        "--contract",
        "synth-answer-tool",
        "--out",
        str(tmp_path / "calls.jsonl"),
    )
    row = json.loads((tmp_path / "calls.jsonl").read_text().splitlines()[0])
    assert (
        code == 0 and row["messages"][-3]["tool_calls"][0]["function"]["name"] == "propose"
    )  # the call, its receipt, the closing turn
    assert [tool["function"]["name"] for tool in row["tools"]] == ["search", "open", "propose"]
    code, _, err = run_cli(
        "export", "selfplay", "--format", "dpo", "--role", "proposer", "--out", str(tmp_path / "p.jsonl")
    )
    assert code != 0 and "--role proposer exports with sft or sft-chatml or sharegpt only" in err
    code, _, err = run_cli(
        "export", "--split", "all", "selfplay", "--format", "sft", "--out", str(tmp_path / "teacher.jsonl")
    )
    assert (
        code != 0 and "no teacher trajectory is selected" in err and not (tmp_path / "teacher.jsonl").exists()
    )  # no teacher ran


@pytest.mark.parametrize(
    "policy, start, expected, decision",
    [
        ("always", 2, [2, 3, 4], "deeper"),
        ("never", 4, [4, 3, 2], "shallower"),
    ],
)
def test_rounds_move_the_requested_searches_toward_the_band(world, tmp_path, policy, start, expected, decision):
    """Always or never solved: every proposal is outside the band 0 < s < 1, so nothing survives, nothing is
    published (an empty version helps no one), and the failed run still tells where the proposals went."""
    backends = backends_of(world(policy))
    settings = Settings(home=tmp_path)
    with pytest.raises(NothingSurvived, match="no item survived .*band: too_"):
        generate(settings, "selfplay", params(f"curriculum.start_searches={start}"), llm="fake", backends=backends)
    with Catalog.open(settings, read_only=True) as catalog:
        assert catalog.versions(include_unpublished=True) == []
        [run] = catalog.runs()
    assert run.status == "failed"
    rounds = run.summary["rounds"]
    assert [r["requested_searches"] for r in rounds] == expected
    assert [r["decision"] for r in rounds[:2]] == [decision, decision]
    assert all(r["mean_searches_made"] == r["requested_searches"] for r in rounds)  # the proposer did as asked
    reason = "too_easy" if policy == "always" else "too_hard"
    assert next(stage for stage in run.funnel if stage.stage == "band").dropped == {reason: 12}
    folder = RunDir.at(settings.home / "runs" / run.run_id)
    proposals = [
        t for stage in folder.stages() if stage.startswith("round-") for t in folder.load(stage).tables["trajectories"]
    ]
    proposals = [t for t in proposals if t.role == "proposer"]
    assert (
        len(proposals) == 12
        and {t.reject_reason for t in proposals} == {reason}
        and not any(t.selected for t in proposals)
    )
    assert {t.metadata["reward"] for t in proposals} == (
        {0.0} if policy == "always" else {1.0}
    )  # SSP: 1 - solver success


class Crash(Exception):
    pass


def test_a_run_that_crashes_mid_round_resumes_without_sending_any_answered_call_again(world, tmp_path):
    scripted = world("alternate")
    sent: list[str] = []
    crash = {"armed": True}

    def crashing(request):
        if crash["armed"] and request.stage == "solver_search" and len(sent) > 40:
            raise Crash("killed")  # in round 2, after its proposals and RAG checks were answered
        sent.append(json.dumps([request.stage, request.messages, request.sampling.seed]))
        return scripted(request)

    settings = Settings(home=tmp_path)
    with pytest.raises(Crash):
        generate(settings, "selfplay", params(), llm="fake", backends=backends_of(crashing))
    runs = list((tmp_path / "runs").iterdir())
    assert sorted(path.parent.name for path in runs[0].glob("*/stage.json")) == ["round-00000"]  # round 2 was cut off
    answered_before = len(sent)

    crash["armed"] = False
    scripted.solver_calls.clear()
    resumed = generate(settings, "selfplay", params(), llm="fake", backends=backends_of(crashing))
    assert list((tmp_path / "runs").iterdir()) == runs  # the same run folder, resumed
    assert resumed.version.row_counts["items"] == 6
    assert len(sent) > answered_before  # the rest of round 2 and round 3 were sent ...
    assert len(set(sent)) == len(sent)  # ... and nothing answered before the crash was sent again
    assert resumed.version.summary["llm"]["llm_cache_hits"] == 16  # round 2's 12 proposer turns and 4 RAG checks

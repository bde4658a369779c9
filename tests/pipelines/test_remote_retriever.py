"""Agents searching through someone else's retriever: a loopback `synth search serve`, in its own
process, gives the multihop panel and the self-play proposer exactly what the in-process index
gives, and the version records which retriever the run used."""

import re

import pytest
from search_server import search_server
from test_selfplay import CORPUS, ScriptedWorld, params

from synth.llm.fake import ScriptedBackend, dry_run_reply
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

PANEL = [
    "n=4",
    "seed=5",
    "hops=[2]",
    "oversample=1.0",
    "panel.solvers=[{name: a, model: fake, conditions: [search], k: 2}, {name: r, baseline: bm25_reader, "
    "conditions: [search], k: 1}]",
]


def searching_solver(request):
    """Searches the question, then answers with the title of the first document shown."""
    if request.stage != "solver_search":
        return dry_run_reply(request)
    start = max(
        index for index, m in enumerate(request.messages) if m["role"] == "user" and "Question: " in str(m["content"])
    )
    shown = [
        str(m["content"]) for m in request.messages[start + 1 :] if str(m["content"]).startswith("<tool_response>")
    ]
    if not shown:  # (demonstrations come before the question)
        question = re.search(r"Question: (.*)", request.messages[start]["content"]).group(1)
        query = question.replace('"', "")
        return f'<tool_call>{{"name": "search", "arguments": {{"query": "{query}"}}}}'
    return f"<answer>{re.search(r'Title: ([^)]*)', shown[-1]).group(1)}</answer>"


def published(settings, version, table):
    return [record.model_dump(mode="json", exclude={"created_at"}) for record in iter_records(settings, version, table)]


def test_the_multihop_panel_searching_a_remote_retriever_sees_what_the_local_index_shows(tmp_path):
    backends = {"fake": ScriptedBackend(default=searching_solver, name="dry-run")}
    local = Settings(home=tmp_path / "local")
    here = generate(local, "multihop", PANEL, backends=backends)
    with search_server(tmp_path / "server") as url:
        remote = Settings(home=tmp_path / "remote")
        there = generate(remote, "multihop", [*PANEL, f"world.retriever={url}"], backends=backends)
    trajectories = published(local, here.version, "trajectories")
    assert trajectories and all(t["num_tool_calls"] == 1 for t in trajectories)
    for table in ("items", "attempts", "trajectories", "verdicts"):
        assert published(remote, there.version, table) == published(local, here.version, table), table
    assert here.version.summary["retriever"]["retriever"] == "bm25"
    lineage = there.version.summary["retriever"]
    assert lineage["endpoint"] == url and lineage["server"]["retriever"] == "bm25"
    assert lineage["corpus_fingerprint"] == here.version.summary["retriever"]["corpus_fingerprint"]


def test_the_selfplay_proposer_searching_a_remote_retriever_proposes_what_it_proposes_locally(tmp_path):
    runs = {}
    with search_server(tmp_path / "server", "--corpus", str(CORPUS)) as url:
        for where, extra in (("local", []), ("remote", [f"world.retriever={url}"])):
            backends = {"fake": ScriptedBackend(default=ScriptedWorld("alternate"), name="dry-run")}
            settings = Settings(home=tmp_path / where)
            runs[where] = (
                settings,
                generate(settings, "selfplay", params(*extra), llm="fake", backends=backends).version,
            )
    proposals = [t for t in published(*runs["local"], "trajectories") if t["role"] == "proposer"]
    assert proposals and all(t["num_tool_calls"] >= 2 for t in proposals)
    for table in ("items", "trajectories", "attempts", "verdicts"):
        assert published(*runs["remote"], table) == published(*runs["local"], table), table
    assert runs["remote"][1].summary["retriever"]["endpoint"] == url


def test_an_unreachable_retriever_fails_with_the_url_and_the_fix(tmp_path):
    from synth.schemas import Document
    from synth.search.corpus import Corpus
    from synth.search.remote import RemoteRetriever, RetrieverUnavailable

    corpus = Corpus([Document(id="d1", title="T", text="text")], name="one")
    retriever = RemoteRetriever("http://127.0.0.1:9/retrieve", corpus, attempts=2, log=lambda line: None)
    with pytest.raises(
        RetrieverUnavailable, match=r"127\.0\.0\.1:9/retrieve did not answer after 2 attempts.*start it"
    ):
        retriever.search(["anything"], 1)

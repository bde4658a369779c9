"""Corpus, retrievers, agent tools and the Search-R1-shaped server, on small worlds."""

import asyncio
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from synth.errors import ConfigError
from synth.kg.snapshot import load_snapshot
from synth.schemas import Document, FunctionCall, ToolCall
from synth.search.corpus import Corpus, KGCorpus, split_contents
from synth.search.retrieval import BM25Retriever, DenseRetriever, HybridRetriever
from synth.search.server import make_app
from synth.search.tools import SearchTools

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_kg"
DOCS = [
    Document(id="d1", title="Paris", text="Paris is the capital and largest city of France."),
    Document(id="d2", title="Berlin", text="Berlin is the capital of Germany."),
    Document(id="d3", title="Louvre", text="The Louvre is an art museum in Paris."),
    Document(id="d4", title="Volcano", text="Mount Etna is an active volcano on Sicily."),
]


@pytest.fixture
def corpus():
    return Corpus(DOCS, name="test")


def test_every_edge_of_the_bundled_graph_is_stated_in_its_evidence_document():
    kg = load_snapshot()
    corpus = KGCorpus(kg)
    texts = {document.id: document.text for document in corpus.documents()}
    for head, relation, tail in kg.triples():
        sentence = f"{kg.name(head)} {kg.relations[relation].forward} {kg.name(tail)}."
        assert sentence in texts[corpus.evidence_id(head, relation, tail)], (head, relation, tail)


def test_search_r1_jsonl_round_trips_and_bad_lines_name_their_number(tmp_path, corpus):
    path = tmp_path / "corpus.jsonl"
    assert corpus.write_jsonl(path) == 4
    first = json.loads(path.read_text().splitlines()[0])
    assert first == {"id": "d1", "contents": '"Paris"\nParis is the capital and largest city of France.'}
    again = Corpus.from_jsonl(path)
    assert list(again.documents) == list(corpus.documents) and again.fingerprint == corpus.fingerprint
    assert split_contents('"A title"\nline one\nline two') == ("A title", "line one\nline two")
    path.write_text(path.read_text() + '{"id": "d9"}\n')
    with pytest.raises(ConfigError, match=r"corpus.jsonl:5: not a Search-R1 corpus line"):
        Corpus.from_jsonl(path)
    with pytest.raises(ConfigError, match="'d1' occurs more than once"):
        Corpus(DOCS + DOCS[:1], name="twice")


def test_bm25_finds_the_document_and_caches_its_index(tmp_path, corpus):
    lines: list[str] = []
    retriever = BM25Retriever(corpus, tmp_path, log=lines.append)
    [hits, none] = retriever.search(["capital of Germany", "zzzz qqqq"], k=3)
    assert corpus.documents[hits[0].position].id == "d2" and hits[0].score > 0
    assert none == []  # nothing matches: no zero-score filler
    assert any("building the BM25 index" in line for line in lines)
    lines.clear()
    BM25Retriever(corpus, tmp_path, log=lines.append)
    assert lines == []  # reloaded from the cache, not rebuilt
    changed = Corpus(DOCS[:3], name="smaller")
    BM25Retriever(changed, tmp_path, log=lines.append)
    assert lines, "a different corpus gets its own index"


def test_dense_and_hybrid_load_offline_and_rank_by_meaning(tmp_path, corpus, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    dense = DenseRetriever(corpus, tmp_path, log=lambda line: None)
    [hits] = dense.search(["a famous museum of paintings"], k=2)
    assert corpus.documents[hits[0].position].id == "d3"
    hybrid = HybridRetriever(BM25Retriever(corpus, tmp_path, log=lambda line: None), dense)
    [fused] = hybrid.search(["Which city is the capital of France?"], k=2)
    assert corpus.documents[fused[0].position].id == "d1"
    assert dense.ann is None  # a small corpus is searched exactly
    approximate = DenseRetriever(corpus, tmp_path, log=lambda line: None, ann="hnsw")
    assert approximate.ann is not None and list((tmp_path).glob("hnsw-*/index.faiss"))
    queries = ["a famous museum of paintings", "Which city is the capital of France?", "rivers and bridges"]
    for exact, near in zip(dense.search(queries, 3), approximate.search(queries, 3)):
        assert [hit.position for hit in near] == [hit.position for hit in exact]
        assert [round(hit.score, 4) for hit in near] == [round(hit.score, 4) for hit in exact]


def tool_call(name: str, arguments) -> ToolCall:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id="c1", function=FunctionCall(name=name, arguments=text))


def test_agent_tools_render_like_search_r1_and_survive_bad_calls(tmp_path, corpus):
    tools = SearchTools(corpus, BM25Retriever(corpus, tmp_path, log=lambda line: None))
    assert [schema["function"]["name"] for schema in tools.schemas] == ["search", "open"]
    shown = tools.call(tool_call("search", {"query": "volcano Sicily", "k": 1}))
    assert shown == "Doc 1(Title: Volcano) [id: d4] Mount Etna is an active volcano on Sicily."
    assert (
        tools.call(tool_call("open", {"doc_id": "d3"}))
        == "(Title: Louvre) [id: d3] The Louvre is an art museum in Paris."
    )
    assert tools.call(tool_call("open", {"doc_id": "nope"})).startswith("error: no document")
    assert tools.call(tool_call("search", "{not json")).startswith("error:")
    assert tools.call(tool_call("search", {"k": 2})).startswith("error: search needs")
    assert tools.call(tool_call("browse", {})).startswith("error: unknown tool")


def test_the_server_answers_search_r1_requests(tmp_path, corpus):
    from aiohttp.test_utils import TestClient, TestServer

    app = make_app(corpus, BM25Retriever(corpus, tmp_path, log=lambda line: None), "bm25")

    async def go():
        async with TestClient(TestServer(app)) as client:
            scored = await (
                await client.post(
                    "/retrieve",
                    json={"queries": ["capital of Germany", "art museum"], "topk": 2, "return_scores": True},
                )
            ).json()
            plain = await (await client.post("/retrieve", json={"queries": ["capital of Germany"]})).json()
            bad = await client.post("/retrieve", json={"queries": "not a list"})
            health = await (await client.get("/health")).json()
            return scored, plain, bad.status, (await bad.json())["error"], health

    scored, plain, bad_status, bad_error, health = asyncio.run(go())
    assert len(scored["result"]) == 2 and scored["result"][0][0]["document"]["id"] == "d2"
    assert (
        scored["result"][0][0]["document"]["contents"].startswith('"Berlin"\n') and scored["result"][0][0]["score"] > 0
    )
    assert plain["result"][0][0]["id"] == "d2"  # without scores, hits are the documents themselves
    assert bad_status == 400 and "list of strings" in bad_error
    assert health == {"status": "ok", "documents": 4, "retriever": "bm25", "corpus": "test"}


def test_the_server_gives_the_exported_tools_what_they_render_like_the_agents_tools(tmp_path, corpus):
    """verl's exported tools render /retrieve and /open results with synth_contract.py; the text must be
    exactly what synth's in-process tools showed the teacher, for every contract's style."""
    from aiohttp.test_utils import TestClient, TestServer

    from synth.contract import CONTRACTS, portable

    retriever = BM25Retriever(corpus, tmp_path, log=lambda line: None)
    app = make_app(corpus, retriever, "bm25")

    async def go():
        async with TestClient(TestServer(app)) as client:
            found = await (
                await client.post("/retrieve", json={"queries": ["capital of Germany", "art museum"], "topk": 2})
            ).json()
            opened = await (await client.post("/open", json={"ids": ["d3", "nope"]})).json()
            refused = [
                await client.post("/retrieve", json={"queries": ["x"], "topk": topk})
                for topk in (0, -1, 101, "3", True)
            ]
            bad_ids = await client.post("/open", json={"ids": "d3"})
            return (
                found,
                opened,
                [response.status for response in refused],
                (await refused[0].json())["error"],
                bad_ids.status,
            )

    found, opened, refused, refused_error, bad_ids = asyncio.run(go())
    assert refused == [400] * 5 and "`topk` must be an integer from 1 to 100" in refused_error and bad_ids == 400
    fields = [[{key: hit[key] for key in ("id", "title", "text")} for hit in hits] for hits in found["result"]]
    for contract in CONTRACTS.values():
        tools = SearchTools(corpus, retriever, default_k=2, contract=contract)
        argument = contract.search_argument
        for query, hits in zip(["capital of Germany", "art museum"], fields):
            value = [query] if argument == "query_list" else query
            assert tools.call(tool_call("search", {argument: value})) == portable.render_search(
                contract.observation, [hits]
            )
    document, missing = opened["result"]
    assert missing is None and document["contents"] == '"Louvre"\nThe Louvre is an art museum in Paris.'
    tools = SearchTools(corpus, retriever)
    assert portable.render_document({k: document[k] for k in ("id", "title", "text")}, "d3") == tools.call(
        tool_call("open", {"doc_id": "d3"})
    )
    assert portable.render_document(None, "nope") == tools.call(tool_call("open", {"doc_id": "nope"}))


def test_synth_search_serve_starts_answers_and_stops(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "synth.cli.main", "search", "serve", "--kg", str(TINY), "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        import urllib.request

        deadline, answer = time.monotonic() + 60, None
        while time.monotonic() < deadline and answer is None:
            assert server.poll() is None, server.stderr.read()
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/retrieve",
                    method="POST",
                    data=json.dumps({"queries": ["Alice Ames"], "topk": 1, "return_scores": True}).encode(),
                    headers={"Content-Type": "application/json"},
                )
                answer = json.loads(urllib.request.urlopen(request, timeout=5).read())
            except OSError:
                time.sleep(0.2)
        assert answer is not None, "the server never answered"
        assert answer["result"][0][0]["document"]["contents"].startswith('"Alice Ames"')
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert server.returncode is not None


def test_bm25_is_imported_without_numba_which_breaks_vllm_in_the_same_process():
    import subprocess
    import sys

    code = "import sys; from synth.search.retrieval import import_bm25s; import_bm25s(); print('numba' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"

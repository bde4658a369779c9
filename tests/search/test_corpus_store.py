"""The corpus on disk: passages cut from documents, mapped from an Arrow file, found by id."""

import json
import pickle
import random

import pytest

from synth.errors import ConfigError
from synth.schemas import Document, ToolCall
from synth.search.corpus import Corpus
from synth.search.corpus_store import BATCH_ROWS
from synth.search.retrieval import BM25Retriever
from synth.search.tools import SearchTools

LONG_WORDS = [f"w{number}" for number in range(250)]


def write_corpus(path, rows):
    path.write_text(
        "".join(json.dumps({"id": doc_id, "contents": f'"{title}"\n{text}'}) + "\n" for doc_id, title, text in rows)
    )
    return path


@pytest.fixture
def corpus_file(tmp_path):
    return write_corpus(
        tmp_path / "docs.jsonl",
        [
            ("short", "Short", "Ada Lovelace wrote the first program."),
            ("long", "Long Article", " ".join(LONG_WORDS)),
            ("exact", "Exact", " ".join(["x"] * 100)),
        ],
    )


def test_long_documents_become_passages_and_open_returns_the_whole_document(tmp_path, corpus_file):
    corpus = Corpus.from_jsonl(corpus_file, tmp_path / "store", log=lambda line: None)

    assert [document.id for document in corpus.documents] == ["short", "long#0", "long#1", "long#2", "exact"]
    assert corpus.get("long#1").text == " ".join(LONG_WORDS[100:200])
    assert corpus.get("long#1").document_id == "long" and corpus.get("short").document_id is None
    assert corpus.get("long") is None  # a document id is not a passage
    for key in ("long", "long#0", "long#2"):
        whole = corpus.document(key)
        assert (whole.id, whole.title, whole.text, whole.document_id) == (
            "long",
            "Long Article",
            " ".join(LONG_WORDS),
            None,
        )
    assert corpus.document("short").text == "Ada Lovelace wrote the first program."
    assert corpus.document("nothing") is None

    tools = SearchTools(corpus, BM25Retriever(corpus, tmp_path / "cache", log=lambda line: None), default_k=2)
    shown = tools.execute(ToolCall(id="c", function={"name": "open", "arguments": json.dumps({"doc_id": "long#1"})}))
    assert shown.text == f"(Title: Long Article) [id: long] {' '.join(LONG_WORDS)}"
    assert [document.id for document in tools.search("w150 w151")] == ["long#1"]


def test_the_store_is_built_once_and_mapped_after(tmp_path, corpus_file):
    lines: list[str] = []
    first = Corpus.from_jsonl(corpus_file, tmp_path / "store", log=lines.append)
    assert any("building the corpus store" in line for line in lines)
    lines.clear()
    again = Corpus.from_jsonl(corpus_file, tmp_path / "store", log=lines.append)
    assert lines == []
    in_memory = Corpus.from_jsonl(corpus_file)
    assert list(again.documents) == list(first.documents) == list(in_memory.documents)
    assert again.fingerprint == first.fingerprint == in_memory.fingerprint

    whole = Corpus.from_jsonl(corpus_file, tmp_path / "store", passage_words=0, log=lambda line: None)
    assert [document.id for document in whole.documents] == ["short", "long", "exact"]
    assert whole.fingerprint != first.fingerprint

    write_corpus(corpus_file, [("other", "Other", "changed")])  # a changed file is a new store
    assert [
        document.id for document in Corpus.from_jsonl(corpus_file, tmp_path / "store", log=lambda line: None).documents
    ] == ["other"]


def test_fingerprint_is_that_of_the_passages_whatever_the_storage(tmp_path):
    documents = [Document(id=f"d{number}", title=f"T{number}", text=f"text {number}") for number in range(5)]
    path = write_corpus(tmp_path / "c.jsonl", [(d.id, d.title, d.text) for d in documents])
    assert Corpus(documents, name="a").fingerprint == Corpus.from_jsonl(path, tmp_path / "store", log=print).fingerprint


def test_lookups_across_many_batches(tmp_path):
    count = 2 * BATCH_ROWS + 17
    path = write_corpus(
        tmp_path / "many.jsonl", [(f"id-{number}", f"Title {number}", f"text of {number}") for number in range(count)]
    )
    corpus = Corpus.from_jsonl(path, tmp_path / "store", log=lambda line: None)
    assert len(corpus) == len(corpus.documents) == count
    for position in random.Random(0).sample(range(count), 200) + [0, BATCH_ROWS - 1, BATCH_ROWS, count - 1]:
        assert corpus.position(f"id-{position}") == position
        assert corpus.documents[position].text == f"text of {position}"
    assert corpus.documents[-1].id == f"id-{count - 1}"
    texts = [text for batch in corpus.search_texts(". ", BATCH_ROWS - 2, BATCH_ROWS + 2) for text in batch]
    assert texts == [f"Title {number}. text of {number}" for number in range(BATCH_ROWS - 2, BATCH_ROWS + 2)]
    with pytest.raises(IndexError):
        corpus.documents[count]


def test_repeated_ids_are_refused_in_memory_and_on_disk(tmp_path):
    with pytest.raises(ConfigError, match="'a' occurs more than once"):
        Corpus([Document(id="a", title="A", text="x"), Document(id="a", title="A", text="y")], name="twice")
    path = write_corpus(tmp_path / "twice.jsonl", [("b", "B", "x"), ("c", "C", "y"), ("b", "B", "z")])
    with pytest.raises(ConfigError, match="'b' occurs more than once"):
        Corpus.from_jsonl(path, tmp_path / "store", log=lambda line: None)
    # a document cut into passages claims its own id too: another document may not take it
    path = write_corpus(tmp_path / "clash.jsonl", [("long", "L", " ".join(LONG_WORDS)), ("long#1", "X", "short")])
    with pytest.raises(ConfigError, match="'long#1' occurs more than once"):
        Corpus.from_jsonl(path)


def test_a_mapped_corpus_pickles_as_its_folder(tmp_path, corpus_file):
    corpus = Corpus.from_jsonl(corpus_file, tmp_path / "store", log=lambda line: None)
    payload = pickle.dumps(corpus)
    assert len(payload) < 2000  # the folder, not the passages
    copy = pickle.loads(payload)
    assert list(copy.documents) == list(corpus.documents) and copy.document("long#0").text == " ".join(LONG_WORDS)
    small = Corpus([Document(id="a", title="A", text="x")], name="small")
    assert list(pickle.loads(pickle.dumps(small)).documents) == list(small.documents)


def test_a_damaged_store_is_one_line(tmp_path, corpus_file):
    corpus = Corpus.from_jsonl(corpus_file, tmp_path / "store", log=lambda line: None)
    [folder] = [path for path in (tmp_path / "store").iterdir() if path.is_dir()]
    (folder / "passages.arrow").write_bytes(b"not arrow")
    with pytest.raises(ConfigError, match="is damaged .* delete that folder"):
        Corpus.from_jsonl(corpus_file, tmp_path / "store", log=lambda line: None)
    assert len(corpus) == 5


def test_the_graph_corpus_stored_equals_the_one_built_in_memory(tmp_path):
    from synth.kg.snapshot import load_snapshot

    kg = load_snapshot()
    in_memory, stored = Corpus.from_kg(kg), Corpus.from_kg(kg, tmp_path, log=lambda line: None)
    assert (len(stored), stored.fingerprint, stored.name) == (len(in_memory), in_memory.fingerprint, in_memory.name)
    for position in random.Random(1).sample(range(len(stored)), 300):
        passage = stored.documents[position]
        assert (
            passage == in_memory.documents[position] and stored.document(passage.id) == passage
        )  # graph passages are whole


def test_a_shared_cache_serves_the_world_read_only_instead_of_a_build(tmp_path, monkeypatch):
    """Another data root's prebuilt corpus store and BM25 index (`SYNTH_SHARED_CACHE`) are used as
    they are: nothing is built in this root and nothing is written there."""
    from synth.search.world import World
    from synth.settings import Settings

    monkeypatch.delenv("SYNTH_SHARED_CACHE")
    World(Settings(home=tmp_path / "team"), log=lambda line: None).retriever("bm25")
    shared = tmp_path / "team" / "cache"
    before = {path: path.stat().st_mtime_ns for path in shared.rglob("*")}
    monkeypatch.setenv("SYNTH_SHARED_CACHE", f"{tmp_path / 'elsewhere'}:{shared}")
    lines: list[str] = []
    world = World(Settings(home=tmp_path / "mine"), log=lines.append)
    assert world.tools("bm25", 3).search("film director")
    assert not [line for line in lines if "building" in line]
    assert not (tmp_path / "mine" / "cache").exists() or not list((tmp_path / "mine" / "cache").rglob("*"))
    assert {path: path.stat().st_mtime_ns for path in shared.rglob("*")} == before

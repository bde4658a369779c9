"""The world agents search: a corpus, its retrievers and the search tools, built on first use.

Every recipe and `synth search` build it here, so a corpus is loaded one way and a retriever kind
means the same thing everywhere. The corpus comes from a knowledge graph (default: the bundled one)
or a Search-R1 JSONL file, stored once under the cache's `corpus/` folder and memory-mapped after
that. Each consumer (the solver panel, the proposer, the teacher, the shortcut filter) asks for the
retriever kind and top-k it is configured with; one retriever per kind is opened and shared.
"""

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator

from synth.contract import get_contract
from synth.errors import ConfigError
from synth.kg.graph import KnowledgeGraph
from synth.kg.name_mentions import WorldNames
from synth.kg.snapshot import load_kg
from synth.search.corpus import Corpus
from synth.search.passages import PASSAGE_WORDS
from synth.search.remote import RemoteRetriever
from synth.search.retrieval import BM25Retriever, DenseRetriever, HybridRetriever, Retriever
from synth.search.tools import SearchTools
from synth.settings import Settings

RETRIEVERS = ("bm25", "dense", "hybrid")


def check_retriever(kind: str) -> str:
    """`kind` if it names a retriever: one of RETRIEVERS, or the URL of a Search-R1 /retrieve endpoint."""
    if kind in RETRIEVERS or kind.startswith(("http://", "https://")):
        return kind
    raise ValueError(_unknown(kind))


def _unknown(kind: str) -> str:
    return (
        f"unknown retriever {kind!r}; choose one of {', '.join(RETRIEVERS)}, "
        "or give the URL of a Search-R1-compatible /retrieve endpoint (http://HOST:PORT/retrieve)"
    )


RetrieverChoice = Annotated[str, AfterValidator(check_retriever)]
"""A config field naming a retriever: bm25, dense, hybrid or a /retrieve URL."""


def open_retriever(kind: str, corpus: Corpus, cache_dir: Path, log: Callable[[str], None] = print) -> Retriever:
    """A retriever over `corpus`: built (once, cached under `cache_dir`) or, for a URL, remote."""
    if kind.startswith(("http://", "https://")):
        return RemoteRetriever(kind, corpus, cache_dir / "remote-hits.sqlite", log=log)
    if kind == "bm25":
        return BM25Retriever(corpus, cache_dir, log=log)
    if kind == "dense":
        return DenseRetriever(corpus, cache_dir, log=log)
    if kind == "hybrid":
        return HybridRetriever(BM25Retriever(corpus, cache_dir, log=log), DenseRetriever(corpus, cache_dir, log=log))
    raise ConfigError(_unknown(kind))


def describe_retriever(kind: str, retriever: Retriever, corpus: Corpus) -> dict:
    """What a version's lineage records about the retriever its agents searched with."""
    description = getattr(retriever, "description", None)
    return (
        description
        if description is not None
        else {"retriever": kind, "corpus": corpus.name, "corpus_fingerprint": corpus.fingerprint}
    )


def corpus_store(settings: Settings) -> Path:
    return settings.cache_dir / "corpus"


def search_cache(settings: Settings) -> Path:
    return settings.cache_dir / "search"


class World:
    """One corpus and what searches it. `kg`: a graph name, folder or .duckdb (default: the bundled
    graph), or `graph`, one already loaded; `corpus_file`: a Search-R1 JSONL file instead."""

    def __init__(
        self,
        settings: Settings,
        *,
        kg: str | None = None,
        graph: KnowledgeGraph | None = None,
        corpus_file: str | Path | None = None,
        passage_words: int = PASSAGE_WORDS,
        contract: str = "synth",
        log: Callable[[str], None] = print,
    ):
        self.settings, self.kg_name, self.corpus_file = settings, kg, corpus_file
        self.passage_words, self.contract, self.log = passage_words, get_contract(contract), log
        if graph is not None:
            self.__dict__["graph"] = graph
        self._retrievers: dict[str, Retriever] = {}
        self._tools: dict[tuple[str, int], SearchTools] = {}

    @cached_property
    def graph(self) -> KnowledgeGraph:
        """The knowledge graph the corpus is made from (not there for a corpus file)."""
        if self.corpus_file is not None:
            raise ConfigError("this world's corpus is a file, not a knowledge graph")
        self.log("loading the knowledge graph ...")
        return load_kg(self.kg_name, self.settings.kg_path)

    @cached_property
    def names(self) -> WorldNames | None:
        """The graph's entity names and aliases, which trajectory checks look for in what an agent
        says (None for a corpus file: there are no entity names to check against)."""
        return None if self.corpus_file is not None else WorldNames.of_graph(self.graph)

    @cached_property
    def corpus(self) -> Corpus:
        if self.corpus_file is None:
            return Corpus.from_kg(self.graph, corpus_store(self.settings), log=self.log)
        path = Path(self.corpus_file).expanduser()
        if not path.is_file():
            raise ConfigError(
                f"corpus file {path} not found; give a Search-R1 JSONL file "
                '({"id": ..., "contents": "\\"Title\\"\\ntext"} per line): --param corpus=PATH for a recipe, '
                "--corpus PATH for `synth search`"
            )
        return Corpus.from_jsonl(path, corpus_store(self.settings), self.passage_words, log=self.log)

    @property
    def snapshot(self) -> str:
        """The lineage of the corpus: the graph's snapshot id, or the file's name and content hash."""
        if self.corpus_file is None:
            return self.graph.snapshot
        return f"{self.corpus.name}@{self.corpus.fingerprint}"

    def retriever(self, kind: str) -> Retriever:
        if kind not in self._retrievers:
            self.log(f"opening the {kind} retriever of {self.corpus.name} ({len(self.corpus)} documents) ...")
            self._retrievers[kind] = open_retriever(kind, self.corpus, search_cache(self.settings), log=self.log)
        return self._retrievers[kind]

    def tools(self, kind: str, k: int) -> SearchTools:
        """Search and open over the corpus with retriever `kind`, `k` passages a search."""
        if (kind, k) not in self._tools:
            self._tools[kind, k] = SearchTools(self.corpus, self.retriever(kind), default_k=k, contract=self.contract)
        return self._tools[kind, k]

    def lineage(self, kind: str) -> dict:
        """The retriever `kind` as a version's summary records it (a remote one as its /health describes it)."""
        return describe_retriever(kind, self.retriever(kind), self.corpus)

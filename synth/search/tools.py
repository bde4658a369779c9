"""The tools agents search with, as the agent contract declares them (`synth.contract`).

Teachers, solvers and proposers call the same object in-process, so every agent sees the same
world, and results render through the contract's own functions (`synth.contract.portable`), the
very ones the exported verl tools use: `Doc 1(Title: T) [id: I] text` under the default contract,
so an agent can `open` a document and cite it as evidence.
"""

import json
from dataclasses import dataclass, field

from synth.contract import DEFAULT, AgentContract, portable
from synth.schemas import Document, ToolCall
from synth.search.batcher import SearchBatcher
from synth.search.corpus import Corpus
from synth.search.retrieval import Retriever

MAX_K = 20


def document_fields(document: Document) -> dict:
    """A document as the contract's renderers take it."""
    return {"id": document.id, "title": document.title, "text": document.text}


def render_documents(documents: list[Document]) -> str:
    """Documents in the default contract's style (gold evidence, `synth search query`); "" for none."""
    return portable.render_search("synth", [[document_fields(d) for d in documents]]) if documents else ""


@dataclass(frozen=True)
class ToolResult:
    """What one tool call showed the agent: the rendered text, and what it was built from."""

    text: str
    documents: list[Document] = field(default_factory=list)
    """Documents a search returned or `open` read (none for an error)."""
    queries: list[str] = field(default_factory=list)
    """The queries, for a search."""


@dataclass
class SearchTools:
    corpus: Corpus
    retriever: Retriever
    default_k: int = 5
    """Passages per search: the world's fixed top-k (the verl export writes it into its tool config)."""
    contract: AgentContract = DEFAULT
    _batcher: SearchBatcher | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def trajectory_metadata(self) -> dict:
        """What a trajectory made with these tools records: its contract and the search top-k
        (exports render it under that contract; the verl export gives its search tool that k)."""
        return {"contract": self.contract.name, "search_k": self.default_k}

    @property
    def schemas(self) -> list[dict]:
        """The world's tools as OpenAI function schemas (without the contract's `answer` tool)."""
        return list(self.contract.tools)

    def search(self, query: str, k: int | None = None) -> list[Document]:
        return self.search_many([query], k)[0]

    def search_many(self, queries: list[str], k: int | None = None) -> list[list[Document]]:
        return [
            [self.corpus.documents[hit.position] for hit in hits] for hits in self.retriever.search(queries, self._k(k))
        ]

    def _k(self, k: int | None) -> int:
        return max(1, min(int(k or self.default_k), MAX_K))

    def open(self, doc_id: str) -> Document | None:
        """The whole document a passage id (a search result's) or a document id names."""
        return self.corpus.document(doc_id)

    def open_all(self, doc_ids: list[str]) -> list[Document]:
        """The documents of `doc_ids` that exist, in order (evidence ids may name missing documents)."""
        documents = (self.corpus.get(doc_id) for doc_id in doc_ids)
        return [document for document in documents if document is not None]

    def malformed(self, call: ToolCall) -> str | None:
        """Why `call` cannot be run as written (the corrective observation), or None."""
        name = call.function.name
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError:
            return f"error: the arguments of {name} are not valid JSON"
        if name not in self.contract.tool_names:
            return f"error: unknown tool {name!r}; the tools are {' and '.join(self.contract.tool_names)}"
        return portable.argument_error(name, arguments, self.contract.search_argument)

    def call(self, call: ToolCall) -> str:
        """Run one tool call from a model and return the tool message content. Bad calls get an
        error text the model can read and recover from, never an exception."""
        return self.execute(call).text

    def execute(self, call: ToolCall) -> ToolResult:
        """`call`, keeping the queries and the documents shown (a proposer's evidence is exactly these)."""
        ready = self._runnable(call)
        if not isinstance(ready, list):
            return ready
        return self._search_result(ready, self.search_many(ready))

    async def execute_async(self, call: ToolCall) -> ToolResult:
        """`execute` for agents on an event loop: the search runs in the batcher's worker thread,
        together with the other rollouts' searches of the same moment."""
        ready = self._runnable(call)
        if not isinstance(ready, list):
            return ready
        hits = await self.batcher.search(ready, self._k(None))
        return self._search_result(ready, [[self.corpus.documents[hit.position] for hit in found] for found in hits])

    def _runnable(self, call: ToolCall) -> ToolResult | list[str]:
        """A search's queries; for anything else the result itself (an error, or the opened document)."""
        error = self.malformed(call)
        if error is not None:
            return ToolResult(error)
        arguments = json.loads(call.function.arguments or "{}")
        return portable.search_queries(arguments) if call.function.name == "search" else self._open_result(arguments)

    @property
    def batcher(self) -> SearchBatcher:
        if self._batcher is None:
            self._batcher = SearchBatcher(self.retriever)
        return self._batcher

    def __getstate__(self) -> dict:  # the batcher's worker thread does not travel (Dask, pickling)
        return {**self.__dict__, "_batcher": None}

    def _search_result(self, queries: list[str], results: list[list[Document]]) -> ToolResult:
        text = self.contract.render_search([[document_fields(d) for d in hits] for hits in results])
        return ToolResult(text, [document for hits in results for document in hits], queries)

    def _open_result(self, arguments: dict) -> ToolResult:
        doc_id = str(arguments["doc_id"])
        document = self.open(doc_id)
        return ToolResult(
            portable.render_document(document_fields(document) if document else None, doc_id),
            [document] if document else [],
        )

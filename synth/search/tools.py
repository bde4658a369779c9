"""The tools agents search with: `search(query, k)` and `open(doc_id)`, as OpenAI function schemas.

Teachers, solvers and proposers call the same object in-process, so every agent sees the same
world. Results render the way Search-R1 shows retrieved passages to its policy (`Doc i(Title: t)
text`), plus the document id, so an agent can `open` a document and cite it as evidence.
"""

import json
from dataclasses import dataclass, field

from synth.schemas import Document, ToolCall
from synth.search.corpus import Corpus
from synth.search.retrieval import Retriever

MAX_K = 20

SEARCH_SCHEMA = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the document collection. Returns the top passages, each with its document id.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What to look for, in words."},
                "k": {"type": "integer", "description": f"How many passages (1-{MAX_K}).", "minimum": 1, "maximum": MAX_K, "default": 5},
            },
            "required": ["query"],
        },
    },
}
OPEN_SCHEMA = {
    "type": "function",
    "function": {
        "name": "open",
        "description": "Read one document in full by its id (as shown in search results).",
        "parameters": {
            "type": "object",
            "properties": {"doc_id": {"type": "string", "description": "A document id from a search result."}},
            "required": ["doc_id"],
        },
    },
}


ANSWER_SCHEMA = {
    "type": "function",
    "function": {
        "name": "answer",
        "description": "Give the final answer and stop. Only the answer itself (usually a name), no explanation.",
        "parameters": {
            "type": "object",
            "properties": {"answer": {"type": "string", "description": "The final answer."}},
            "required": ["answer"],
        },
    },
}
"""Offered to agents with a native tool-call channel, so the final answer is a call like the others."""


def render_documents(documents: list[Document]) -> str:
    """Search-R1's passage rendering, with each document's id."""
    return "\n".join(
        f"Doc {number}(Title: {document.title}) [id: {document.id}] {document.text}"
        for number, document in enumerate(documents, start=1)
    )


@dataclass(frozen=True)
class ToolResult:
    """What one tool call showed the agent: the rendered text, and what it was built from."""

    text: str
    documents: list[Document] = field(default_factory=list)
    """Documents a search returned or `open` read (none for an error)."""
    query: str | None = None
    """The query, for a search."""


@dataclass
class SearchTools:
    corpus: Corpus
    retriever: Retriever
    default_k: int = 5

    @property
    def schemas(self) -> list[dict]:
        return [SEARCH_SCHEMA, OPEN_SCHEMA]

    def search(self, query: str, k: int | None = None) -> list[Document]:
        k = max(1, min(int(k or self.default_k), MAX_K))
        [hits] = self.retriever.search([query], k)
        return [self.corpus.documents[hit.position] for hit in hits]

    def open(self, doc_id: str) -> Document | None:
        return self.corpus.get(doc_id)

    def open_all(self, doc_ids: list[str]) -> list[Document]:
        """The documents of `doc_ids` that exist, in order (evidence ids may name missing documents)."""
        documents = (self.corpus.get(doc_id) for doc_id in doc_ids)
        return [document for document in documents if document is not None]

    def malformed(self, call: ToolCall) -> str | None:
        """Why `call` cannot be run as written (the corrective observation), or None."""
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError:
            return f"error: the arguments of {call.function.name} are not valid JSON"
        if not isinstance(arguments, dict):
            return f"error: the arguments of {call.function.name} must be a JSON object"
        if call.function.name == "search":
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                return "error: search needs a non-empty string `query`"
        elif call.function.name == "open":
            if arguments.get("doc_id") is None:
                return "error: open needs a `doc_id` from a search result"
        else:
            return f"error: unknown tool {call.function.name!r}; the tools are search and open"
        return None

    def call(self, call: ToolCall) -> str:
        """Run one tool call from a model and return the tool message content. Bad calls get an
        error text the model can read and recover from, never an exception."""
        return self.execute(call).text

    def execute(self, call: ToolCall) -> ToolResult:
        """`call`, keeping the query and the documents shown (a proposer's evidence is exactly these)."""
        error = self.malformed(call)
        if error is not None:
            return ToolResult(error)
        arguments = json.loads(call.function.arguments or "{}")
        if call.function.name == "search":
            query = arguments["query"]
            k = arguments.get("k")
            documents = self.search(query, k if isinstance(k, int) else None)
            return ToolResult(render_documents(documents) if documents else "No results.", documents, query)
        doc_id = arguments["doc_id"]
        document = self.open(str(doc_id))
        if document is None:
            return ToolResult(f"error: no document with id {doc_id!r}")
        return ToolResult(f"(Title: {document.title}) [id: {document.id}] {document.text}", [document])

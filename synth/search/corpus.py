"""A document corpus derived from the knowledge graph, so every edge can be found in text.

Each entity gets passages: its description, then one sentence per outgoing edge
("{head} {forward} {tail}."), `FACTS_PER_PASSAGE` sentences per passage so hub entities do not
produce one enormous document. The passage that states an edge is the edge's evidence; ids
(`{entity_id}#{n}`) are stable for a given snapshot because facts are sorted before chunking.
`Corpus` holds the documents retrievers index, from a graph or from a Search-R1 JSONL file.
"""

import hashlib
import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator

from synth.errors import ConfigError
from synth.kg.graph import FORWARD, KnowledgeGraph
from synth.schemas import Document

FACTS_PER_PASSAGE = 12


def fact_sentence(kg: KnowledgeGraph, head: str, relation: str, tail: str) -> str:
    return f"{kg.name(head)} {kg.relations[relation].forward} {kg.name(tail)}."


@dataclass
class KGCorpus:
    kg: KnowledgeGraph

    def _facts(self, entity_id: str) -> list[tuple[str, str]]:
        """Sorted (relation, tail) pairs of the entity's outgoing edges."""
        return sorted(
            (relation, tail)
            for relation, direction in self.kg.incident(entity_id)
            if direction == FORWARD
            for tail in self.kg.neighbors(entity_id, relation, FORWARD)
        )

    def evidence_id(self, head: str, relation: str, tail: str) -> str:
        """Id of the passage that states `head relation tail`."""
        position = self._facts(head).index((relation, tail))
        return f"{head}#{position // FACTS_PER_PASSAGE}"

    def entity_documents(self, entity_id: str) -> list[Document]:
        facts = self._facts(entity_id)
        entity = self.kg.entities.get(entity_id)
        description = entity.description if entity else ""
        title = self.kg.name(entity_id)
        documents = []
        chunks = [facts[start:start + FACTS_PER_PASSAGE] for start in range(0, len(facts), FACTS_PER_PASSAGE)] or [[]]
        for number, chunk in enumerate(chunks):
            sentences = [fact_sentence(self.kg, entity_id, relation, tail) for relation, tail in chunk]
            lead = [description] if description and number == 0 else []
            text = " ".join(lead + sentences)
            if text:
                documents.append(Document(id=f"{entity_id}#{number}", title=title, text=text, entity_id=entity_id))
        return documents

    def documents(self) -> Iterator[Document]:
        for entity_id in self.kg.node_ids:
            yield from self.entity_documents(entity_id)

    def document(self, doc_id: str) -> Document | None:
        entity_id, _, _ = doc_id.rpartition("#")
        for document in self.entity_documents(entity_id):
            if document.id == doc_id:
                return document
        return None

    @cached_property
    def size(self) -> int:
        return sum(1 for _ in self.documents())


class Corpus:
    """Documents in a fixed order with lookup by id: what retrievers index and `open` reads.

    Built from a knowledge graph (one passage per entity and chunk of its facts) or read from a
    Search-R1 JSONL file (`{"id", "contents"}` with `contents` = `"Title"\\ntext`).
    """

    def __init__(self, documents: Iterable[Document], name: str):
        self.documents = list(documents)
        self.name = name
        self.positions = {document.id: position for position, document in enumerate(self.documents)}
        if len(self.positions) != len(self.documents):
            seen: set[str] = set()
            repeated = next(document.id for document in self.documents if document.id in seen or seen.add(document.id))
            raise ConfigError(f"corpus {name}: document id {repeated!r} occurs more than once; ids must be unique")

    @classmethod
    def from_kg(cls, kg: KnowledgeGraph) -> "Corpus":
        return cls(KGCorpus(kg).documents(), name=f"kg:{kg.snapshot}")

    @classmethod
    def from_jsonl(cls, path: Path) -> "Corpus":
        """A Search-R1 corpus file; a bad line is an error naming its line number."""
        from synth.kg.readers import numbered_lines

        documents = []
        for number, line in numbered_lines(path):
            try:
                row = json.loads(line)
                title, text = split_contents(str(row["contents"]))
                documents.append(Document(id=str(row["id"]), title=title or str(row["id"]), text=text))
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
                raise ConfigError(
                    f"{path}:{number}: not a Search-R1 corpus line ({type(error).__name__}); "
                    'expected {"id": ..., "contents": "\\"Title\\"\\ntext"}'
                ) from None
        if not documents:
            raise ConfigError(f"{path}: the corpus has no documents")
        return cls(documents, name=f"jsonl:{path.name}")

    def __len__(self) -> int:
        return len(self.documents)

    def get(self, doc_id: str) -> Document | None:
        position = self.positions.get(doc_id)
        return self.documents[position] if position is not None else None

    @cached_property
    def fingerprint(self) -> str:
        """Hash of every id, title and text in order: the key of the indexes built on this corpus."""
        digest = hashlib.sha256()
        for document in self.documents:
            digest.update(f"{document.id}\x1f{document.title}\x1f{document.text}\x1e".encode())
        return digest.hexdigest()[:16]

    def write_jsonl(self, path: Path) -> int:
        """Write the corpus in Search-R1's format (for its retrieval server or indexers)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")  # writers of one path never share a temp file
        with open(partial, "w", encoding="utf-8") as handle:
            for document in self.documents:
                handle.write(json.dumps({"id": document.id, "contents": search_r1_contents(document)}, ensure_ascii=False) + "\n")
        partial.replace(path)
        return len(self.documents)


def search_r1_contents(document: Document) -> str:
    return f'"{document.title}"\n{document.text}'


def split_contents(contents: str) -> tuple[str, str]:
    """Search-R1 `contents` -> (title, text): the first line, unquoted, is the title."""
    first, _, rest = contents.partition("\n")
    return first.strip().strip('"'), rest.strip()

"""A document corpus derived from the knowledge graph, so every edge can be found in text.

Each entity gets passages: its description, then one sentence per outgoing edge
("{head} {forward} {tail}."), `FACTS_PER_PASSAGE` sentences per passage so hub entities do not
produce one enormous document. The passage that states an edge is the edge's evidence; ids
(`{entity_id}#{n}`) are stable for a given snapshot because facts are sorted before chunking.
"""

from dataclasses import dataclass
from functools import cached_property
from typing import Iterator

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

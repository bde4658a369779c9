"""Shortcut: an item one search solves is too easy for a search agent.

The question itself is the query (as a lazy agent's first search would be). If the top `k`
documents hold the evidence of every hop and a document that mentions the answer, the multi-hop
structure is decorative: drop the item as one_search_shortcut. Every verdict records the rank of
each hop's evidence and of the first document naming the answer (None: not retrieved), so the
threshold can be revisited with SQL instead of a rerun.
"""

from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from synth.contract.matching import mentions
from synth.filters.base import Filter
from synth.filters.checks import CheckConfig, CheckScope
from synth.schemas import FilterVerdict, Item
from synth.search.corpus import Corpus
from synth.search.retrieval import Retriever
from synth.search.world import RetrieverChoice


class ShortcutConfig(CheckConfig):
    kind: Literal["shortcut"] = "shortcut"
    summary = "Items whose evidence one search with the question retrieves (searches the world)."
    k: int = Field(default=10, ge=1, le=100, description="Documents the one search returns.")
    retriever: RetrieverChoice | None = Field(
        default=None,
        description="The one search is made with this retriever (bm25, dense, hybrid or a /retrieve URL); "
        "default: world.retriever.",
    )

    def build(self, scope: CheckScope) -> "ShortcutFilter":
        world = scope.world()
        return ShortcutFilter(world.corpus, world.retriever(self.retriever or scope.retriever), self.k)


class ShortcutFilter(Filter):
    name = "shortcut"

    def __init__(self, corpus: Corpus, retriever: Retriever, k: int = 10):
        self.corpus = corpus
        self.retriever = retriever
        self.k = k

    def check(self, item: Item):
        return self.apply([item])[0]

    def apply(self, items: Sequence[Item]) -> list[FilterVerdict]:
        results = self.retriever.search([item.question for item in items], self.k) if items else []
        verdicts = []
        for item, hits in zip(items, results):
            documents = [self.corpus.documents[hit.position] for hit in hits]
            rank_of = {document.id: rank for rank, document in reversed(list(enumerate(documents, start=1)))}
            hop_ranks = [rank_of.get(hop.evidence_doc_id) for hop in item.path if hop.evidence_doc_id]
            answer_rank = next(
                (
                    rank
                    for rank, document in enumerate(documents, start=1)
                    if any(mentions(document.text, answer) for answer in item.answers)
                ),
                None,
            )
            details = {"hop_ranks": hop_ranks, "answer_rank": answer_rank, "k": self.k}
            shortcut = bool(hop_ranks) and None not in hop_ranks and answer_rank is not None
            verdicts.append(
                FilterVerdict(
                    item_id=item.id,
                    filter=self.name,
                    kept=not shortcut,
                    reason="one_search_shortcut" if shortcut else None,
                    score=float(max(rank for rank in hop_ranks if rank is not None))
                    if hop_ranks and None not in hop_ranks
                    else None,
                    details=details,
                )
            )
        return verdicts

"""Documents cut into passages of a bounded number of words, as Search-R1's world is.

Search-R1 and the retrievers trained for it (DPR, e5 on wiki-18) index 100-word passages, not
articles: an embedding model reads a bounded window (all-MiniLM-L6-v2 truncates at 256 tokens), the
cost of embedding a corpus grows with its words rather than with its longest article, and a result
cites the passage that says the thing. A document no longer than the limit stays one passage under
its own id, so a corpus that is already passages (wiki-18) keeps the ids its retrieval server uses;
a longer one becomes `ID#0`, `ID#1`, ..., each remembering its document, which `open` returns whole.
"""

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI reads PASSAGE_WORDS for its help text without importing pydantic
    from synth.schemas import Document

PASSAGE_WORDS = 100
"""Search-R1's passage size (the 2018 Wikipedia dump in 100-word passages)."""


def split_document(document: "Document", words: int = PASSAGE_WORDS) -> Iterator[tuple["Document", int]]:
    """(passage, its number in the document) for each passage of `document`; 0 words keeps it whole."""
    tokens = document.text.split()
    if words <= 0 or len(tokens) <= words:
        yield document, 0
        return
    from synth.schemas import Document  # deferred: see the TYPE_CHECKING import

    for part, start in enumerate(range(0, len(tokens), words)):
        passage = Document(
            id=f"{document.id}#{part}",
            title=document.title,
            text=" ".join(tokens[start : start + words]),
            entity_id=document.entity_id,
            document_id=document.id,
        )
        yield passage, part

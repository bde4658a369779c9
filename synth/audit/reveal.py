"""What the reveal sheet (and a revealed judge) sees of an item: its construction path in words,
and the sentences of its evidence that state each step."""

import re

from synth.audit.sheets import Reveal
from synth.browse.data import StoreView
from synth.schemas import DatasetVersion, Hop, Item

EVIDENCE_CHARS = 300
"""Most characters of evidence shown per step."""


def reveals(view: StoreView, version: DatasetVersion, items: list[Item]) -> dict[str, Reveal]:
    """Per item id: its path and evidence, named from the version's graph where it is here."""
    name, phrase = view.entity_name(version), view.relation_phrase(version)
    found = {}
    for item in items:
        edges = item.path + [Hop.model_validate(edge) for edge in item.metadata.get("cue_edges", [])]
        steps = [f"{name(edge.head)} -[{phrase(edge.relation)}]-> {name(edge.tail)}" for edge in edges]
        passages = dict(view.passages(version, [edge.evidence_doc_id for edge in edges if edge.evidence_doc_id]))
        evidence = []
        for edge in edges:
            passage = passages.get(edge.evidence_doc_id or "")
            if passage is not None:
                evidence.append(_stating(passage.text, [name(edge.head), name(edge.tail)]))
        found[item.id] = Reveal(
            path="; ".join(steps), evidence=" | ".join(dict.fromkeys(text for text in evidence if text))
        )
    return found


def _stating(text: str, names: list[str]) -> str:
    """The sentences of `text` naming one of `names` (the passage's start when none does), cut short."""
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    wanted = [sentence for sentence in sentences if any(name and name in sentence for name in names)]
    shown = " ".join(wanted or sentences[:1])
    return shown if len(shown) <= EVIDENCE_CHARS else shown[: EVIDENCE_CHARS - 3] + "..."

"""What audits say about a graph's relations: per relation, how many items people rated used it and how
many of those rested on a fact the reader found wrong (`answer_right` no); a served judge's verdicts
are left out until it is calibrated against people. The construction stops using a
relation readers keep catching out (synth.kg.relation_profile), so the store's audits calibrate the
next run on the same graph.

A single wrong fact on a good relation (Manish Malhotra "was born in" Westminster) is caught by the
reader's note: a fact of a wrong item whose head and tail one denying clause of the note names
("born in Mumbai, not Westminster") is the one blamed (`wrong_facts`), and runs on the graph leave
it out."""

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from synth.audit.sample import read_items
from synth.errors import SynthError
from synth.kg.names import token_sequence
from synth.schemas import Hop, Item
from synth.settings import Settings
from synth.store.audits import all_audits, load_ratings
from synth.store.catalog import Catalog


@dataclass(frozen=True)
class RelationFlags:
    flagged: Counter
    """Relation -> rated items using it whose stored answer a reader found wrong."""
    rated: Counter
    """Relation -> rated items using it (where the reader said right or wrong)."""
    items_flagged: int = 0
    items_rated: int = 0
    wrong_facts: frozenset[tuple[str, str, str]] = field(default_factory=frozenset)
    """(head, relation, tail) of the facts readers' notes blamed (`blamed_facts`)."""

    def share(self, relation: str) -> float:
        return self.flagged[relation] / self.rated[relation] if self.rated[relation] else 0.0

    @property
    def base_share(self) -> float:
        """The share of all rated items resting on a wrong fact: every relation of such an item is
        blamed, so a relation stands out only well above it."""
        return self.items_flagged / self.items_rated if self.items_rated else 0.0


def relations_of(item: Item) -> set[str]:
    """Every relation an item's question rests on: its path, its cues' edges and its facts."""
    found = {hop.relation for hop in item.path}
    found |= {edge.get("relation") for edge in item.metadata.get("cue_edges", []) if edge.get("relation")}
    found |= {fact.relation for constraint in item.constraints for step in constraint.steps for fact in step.where}
    return found


NEGATION = re.compile(r"\b(?:not|never|no longer|rather than|instead of)\b|n't\b", re.IGNORECASE)
"""A clause that says a fact is wrong says so: "born in Mumbai, not Westminster"."""
CLAUSES = re.compile(r";|(?<=\w\w)\.\s")
"""Clauses of a note: at semicolons and full stops (not an initial's: "Edward D. Barnes")."""


def blamed_facts(item: Item, note: str, names: Callable[[str], list[str]]) -> set[tuple[str, str, str]]:
    """The facts of a wrong item (its path and cue edges) that one clause of the reader's note denies:
    a clause with a negation that names the fact's head and its tail (any of their names, whole
    words, any case), as in "Manish Malhotra was born in Mumbai, not Westminster"."""
    clauses = [token_sequence(clause) for clause in CLAUSES.split(note) if NEGATION.search(clause)]

    def denied(head: str, tail: str) -> bool:
        heads, tails = [list(filter(None, map(token_sequence, names(entity)))) for entity in (head, tail)]
        return any(any(h in clause for h in heads) and any(t in clause for t in tails) for clause in clauses)

    edges = [*item.path, *(Hop.model_validate(edge) for edge in item.metadata.get("cue_edges", []))]
    return {(edge.head, edge.relation, edge.tail) for edge in edges if denied(edge.head, edge.tail)}


def relation_flags(
    settings: Settings, kg_snapshot: str, names: Callable[[str], list[str]] | None = None
) -> RelationFlags:
    """The flags of people's audits in the store of versions built on `kg_snapshot` (empty without any);
    with `names` (entity id -> its names), the facts readers' notes blame too."""
    flagged, rated = Counter(), Counter()
    wrong: set[tuple[str, str, str]] = set()
    items_flagged = items_rated = 0
    people = [run for run in all_audits(settings) if run.reader_kind == "person"]  # a judge is calibrated, not believed
    if not people:
        return RelationFlags(flagged, rated)
    try:
        with Catalog.open(settings, read_only=True) as catalog:
            versions = {(version.name, version.version): version for version in catalog.versions()}
    except SynthError:  # no catalog to read: nothing to calibrate on
        return RelationFlags(flagged, rated)
    items: dict[tuple[str, int], dict[str, Item]] = {}
    for run in people:
        for rating in load_ratings(settings, run.id):
            key = (rating.dataset, rating.version)
            version = versions.get(key)
            if version is None or version.kg_snapshot != kg_snapshot or rating.answer_right is None:
                continue
            if key not in items:
                items[key] = {item.id: item for item in read_items(settings, version)}
            item = items[key].get(rating.item_id)
            if item is None:
                continue
            items_rated += 1
            items_flagged += not rating.answer_right
            for relation in relations_of(item):
                rated[relation] += 1
                flagged[relation] += not rating.answer_right
            if names is not None and not rating.answer_right and rating.note:
                wrong |= blamed_facts(item, rating.note, names)
    return RelationFlags(flagged, rated, items_flagged, items_rated, frozenset(wrong))

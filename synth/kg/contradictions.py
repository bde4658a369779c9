"""Single facts that contradict their relation's type, found where the relation is otherwise coherent.

A relation whose facts nearly all reach one kind of thing ("was made in" reaches countries, "has the
gender" holds of people) states a wrong fact when one of them reaches another kind: EastEnders "was
made in" London (a city), "Godzilla is in the language England", the Kingdom of Prussia "has the
gender" Male; and an entity related to itself (Metropolis "was influenced by" Metropolis). Readers
caught each of these in audits. Where a relation side disagrees with its type often, the type
system is loose there (schools "located in" places), not the facts, so a side counts only while at
most `max_share` of its typed facts disagree.
"""

import numpy as np

from synth.kg.graph import KnowledgeGraph
from synth.kg.types import BROADER, PERSON_KINDS, EntityTypes


def compatible(noun: str, expected: str) -> bool:
    """Whether an entity of `noun` may sit where the relation expects `expected`."""
    if noun == expected or (noun in PERSON_KINDS and expected in PERSON_KINDS):
        return True
    return BROADER.get(noun) == expected or BROADER.get(expected) == noun


def contradicting_edges(kg: KnowledgeGraph, types: EntityTypes, max_share: float) -> np.ndarray:
    """A mask over `kg`'s edges in out-index order (the order `KnowledgeGraph.without_edges` takes):
    self-loops, and facts whose head or tail has a noun that contradicts a relation side at most
    `max_share` of whose typed facts disagree with it."""
    heads, relations, tails = kg.edges()
    nouns = [types.noun(node) for node in kg.node_ids]
    known = sorted({noun for noun in nouns if noun is not None})
    noun_of = np.array([known.index(noun) if noun is not None else -1 for noun in nouns], dtype=np.int32)
    wrong = heads == tails
    for number, relation_id in enumerate(kg.relation_ids):
        relation = kg.relations.get(relation_id)
        if relation is None or relation.literal:
            continue
        edges = np.flatnonzero(relations == number)
        for nodes, expected in ((heads[edges], relation.head_type), (tails[edges], relation.tail_type)):
            if not expected:
                continue
            fits = np.array([compatible(noun, expected) for noun in known] + [True])  # -1: no noun, no verdict
            typed = noun_of[nodes] >= 0
            against = typed & ~fits[noun_of[nodes]]
            if against.any() and against.sum() <= max_share * typed.sum():
                wrong[edges[against]] = True
    return wrong

"""How likely a fact the graph does not list holds, given another fact it lists between the same two
entities: readers' second answers are often co-workers (Joel Coen, credited as an editor and director
of The Ladykillers, is also its producer; a co-writer of The Last Samurai who produced a film James
Horner scored may have directed one), and the graph lists credits in part.

The rate is measured on the graph itself: of the entity pairs linked by relation R' (on a given
side), the share also linked by R (P(produced | directed) = 0.32 in the bundled graph, P(produced |
edited) = 0.10, P(edited | composed) = 0.005). It is read where both facts are listed, so it is a
floor for a world where R is missing more often than R' (WorldModel.rivals).
"""

from functools import cached_property

import numpy as np

from synth.kg.graph import FORWARD, KnowledgeGraph

PRIOR = 5
"""Pairs added to every relation's count: a relation with few pairs gives no confident rate."""
SIDES = 2
"""A candidate is the tail (side 0) or the head (side 1) of the other relation's edge."""


class CoCredits:
    """Per relation and direction, how often another relation between the same two entities comes
    with it (see the module docstring)."""

    def __init__(self, kg: KnowledgeGraph):
        self.kg = kg
        self._rates: dict[tuple[str, str], np.ndarray] = {}

    @cached_property
    def _edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(relation, key with the candidate as tail, key with the candidate as head, pairs per relation)."""
        heads, relations, tails = self.kg.edges()
        heads, tails, size = heads.astype(np.int64), tails.astype(np.int64), self.kg.num_nodes
        counts = np.bincount(relations, minlength=len(self.kg.relation_ids)).astype(float)
        return relations, heads * size + tails, tails * size + heads, counts

    def rates(self, relation: str, direction: str) -> np.ndarray:
        """rates[r, side]: the share of pairs (x, c) linked by relation r, c on `side`, that are also
        linked by stepping from x over `relation` in `direction` to c (the relation itself excluded)."""
        key = (relation, direction)
        found = self._rates.get(key)
        if found is None:
            relations, as_tail, as_head, counts = self._edges
            number = self.kg.relation_index.get(relation)
            found = np.zeros((len(self.kg.relation_ids), SIDES))
            if number is not None:
                stepped = np.unique((as_tail if direction == FORWARD else as_head)[relations == number])
                for side, keys in enumerate((as_tail, as_head)):
                    hits = np.bincount(relations, weights=np.isin(keys, stepped), minlength=len(counts))
                    found[:, side] = hits / (counts + PRIOR)
                found[number, 0 if direction == FORWARD else 1] = 0.0  # the relation itself
            self._rates[key] = found
        return found

    def chance(self, candidate: int, sources: np.ndarray, relation: str, direction: str) -> float:
        """The chance that stepping from one of `sources` over `relation` in `direction` reaches
        `candidate` in the world, from the other relations linking the two in the graph (taken as
        independent signs)."""
        if not len(sources):
            return 0.0
        rates = self.rates(relation, direction)
        missing = 1.0
        for side, index in enumerate((self.kg.in_index, self.kg.out_index)):
            relations, first = index.runs(candidate)
            for offset, other in enumerate(relations):
                rate = rates[other, side]
                if rate > 0 and np.isin(index.run_neighbors(first + offset), sources, assume_unique=True).any():
                    missing *= 1 - rate
        return 1 - missing

    def candidates(self, sources: np.ndarray, relation: str, direction: str, least: float) -> dict[int, float]:
        """Entities linked to one of `sources` by another relation whose rate is at least `least`,
        with their `chance` (the rivals a graph that lists `relation` in part hides)."""
        rates = self.rates(relation, direction)
        found: set[int] = set()
        for side, index in enumerate((self.kg.out_index, self.kg.in_index)):
            for source in sources.tolist():
                relations, first = index.runs(source)
                for offset, other in enumerate(relations):
                    if rates[other, side] >= least:
                        found.update(index.run_neighbors(first + offset).tolist())
        return {node: self.chance(node, sources, relation, direction) for node in sorted(found)}

"""The bundled graph read straight from its shipped files, without synth's loader: what tests
re-derive answers and names from, independently of the code under test."""

import csv
import gzip
from collections import defaultdict

import numpy as np

from synth.kg.snapshot import bundled_path


def raw_tsv(name: str) -> list[dict[str, str]]:
    path = bundled_path() / name
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


class RawGraph:
    def __init__(self):
        self.forward, self.inverse = defaultdict(set), defaultdict(set)
        for row in raw_tsv("triples.tsv.gz"):
            if row["head"] == row["tail"]:  # an entity related to itself is no fact (a place as its own
                continue  # county seat); construction leaves such triples out too
            self.forward[(row["head"], row["relation"])].add(row["tail"])
            self.inverse[(row["tail"], row["relation"])].add(row["head"])
        entities = raw_tsv("entities.tsv.gz")
        self.names = {row["id"]: row["name"] for row in entities}
        self.aliases = {row["id"]: [alias for alias in row["aliases"].split("|") if alias] for row in entities}
        self.phrases = {row["id"]: row["forward"] for row in raw_tsv("relations.tsv")}

    def follow(self, anchor, steps) -> set[str]:
        """Entities reached from `anchor` by `steps`, each step's facts (`where`) applied."""
        frontier = {anchor}
        for step in steps:
            index = self.forward if step.direction == "forward" else self.inverse
            frontier = {neighbor for entity in frontier for neighbor in index[(entity, step.relation)]}
            for fact in step.where:  # the reached entity must have this fact too
                frontier &= (self.forward if fact.direction == "forward" else self.inverse)[
                    (fact.anchor, fact.relation)
                ]
        return frontier

    def without(self, facts: set[tuple[str, str, str]]) -> "RawGraph":
        """A copy less these (head, relation, tail) facts: the triples a run keeps once it drops the
        facts it takes as false."""
        copy = object.__new__(RawGraph)
        copy.names, copy.aliases, copy.phrases = self.names, self.aliases, self.phrases
        copy.forward, copy.inverse = defaultdict(set), defaultdict(set)
        for (head, relation), tails in self.forward.items():
            for tail in tails:
                if (head, relation, tail) not in facts:
                    copy.forward[(head, relation)].add(tail)
                    copy.inverse[(tail, relation)].add(head)
        return copy

    def values(self, relation: str, direction: str) -> list[int]:
        """How many values each entity that has `relation` in `direction` has."""
        index = self.forward if direction == "forward" else self.inverse
        return [len(values) for (entity, name), values in index.items() if name == relation and values]

    def world_bounded(self, relation: str, direction: str, mean: float, p90: float) -> bool:
        """The project's definition, re-derived: few values per entity on average and for 90% of them."""
        counts = self.values(relation, direction)
        return bool(counts) and float(np.mean(counts)) <= mean and float(np.quantile(counts, 0.9)) <= p90

    def hub(self, anchor: str, relation: str, direction: str, share: float, least: int) -> bool:
        """The project's definition, re-derived: the fact is shared by more than `least` entities and
        by more than `share` of the entities that have the relation at all."""
        index = self.forward if direction == "forward" else self.inverse
        matches = len(index[(anchor, relation)])
        reverse = "inverse" if direction == "forward" else "forward"
        having = len(self.values(relation, reverse))
        return matches > least and matches > share * having

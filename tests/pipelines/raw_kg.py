"""The bundled graph read straight from its shipped files, without synth's loader: what tests
re-derive answers and names from, independently of the code under test."""

import csv
import gzip
from collections import defaultdict

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

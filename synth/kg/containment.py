"""Containment read at every level: a town is in a county, a state, a country and a continent, and
the graph lists one level per relation (`hud_county_place/county`, `location/contains`,
`administrative_parent`, ...). A question that says "a place containing Akron" is answered by every
level, so the world estimate follows the closure over every containment relation going the same
way (synth.kg.relation_profile says which relations are containment; the direction with fewer
values per holder goes up). Closures are computed once per graph, as CSR arrays.
"""

from collections.abc import Callable
from functools import cached_property

import numpy as np

from synth.kg.alike import alike_steps
from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph, concat_ranges, kept_step
from synth.kg.relation_profile import CONTAINMENT_WORDS

CLOSURE_LEVELS = 4
"""Levels of a containment followed for its closure (a town, a county, a state, a country, a continent)."""


def rising_containment(kg: KnowledgeGraph) -> list[tuple[str, str]]:
    """(relation id, direction going up) of every relation whose words say containment ("contains",
    "is located in", "is administratively part of"), read by its words alone, not by its profile: up is
    the direction with fewer values per holder (a place has few containers, a container many places)."""
    found = []
    for relation_id, relation in kg.relations.items():
        number = kg.relation_index.get(relation_id)
        if number is None or relation.literal or not CONTAINMENT_WORDS.search(relation.forward.lower()):
            continue
        forward, inverse = (_values_per_holder(kg.index(direction), number) for direction in (FORWARD, INVERSE))
        if forward is not None and inverse is not None:
            found.append((relation_id, FORWARD if forward <= inverse else INVERSE))
    return found


def _values_per_holder(index, relation: int) -> float | None:
    runs = index.run_rel == relation
    if not runs.any():
        return None
    return float(np.diff(index.run_start)[runs].mean())


class Containment:
    def __init__(self, kg: KnowledgeGraph, profiles, statistics: Callable):
        """`profiles(relation, direction)`: the relation profiles; `statistics(relation, direction)`:
        values per holder (WorldModel.statistics)."""
        self.kg, self.profiles, self.statistics = kg, profiles, statistics
        self._kept: dict[tuple, np.ndarray] = {}
        """`reach` from small frontiers, already followed."""

    def reach(self, nodes: np.ndarray, relation: str, direction: str, transitive: bool) -> np.ndarray:
        """One step from `nodes`, over every relation that reads the same (synth.kg.alike); with
        `transitive`, every level of it (at most CLOSURE_LEVELS) over every containment relation
        going the same way (up from a town to its county, state and country, whichever relation
        lists each level). Kept for small frontiers, as `KnowledgeGraph.step_nodes` keeps its steps."""
        step = (relation, direction, transitive)
        return kept_step(self._kept, nodes, step, lambda: self._reach(nodes, relation, direction, transitive))

    def _reach(self, nodes: np.ndarray, relation: str, direction: str, transitive: bool) -> np.ndarray:
        reached = self.kg.step_nodes(nodes, relation, direction)
        for other, way in self.alike.get((relation, direction), [])[1:]:  # read alike: one step to a reader
            reached = np.union1d(reached, self.kg.step_nodes(nodes, other, way))
        if not transitive or not len(reached):
            return reached
        up, _ = self.families
        pointers, members = self.closures[0 if (relation, direction) in up else 1]
        more = members[concat_ranges(pointers[reached], pointers[reached + 1])]
        return np.union1d(reached, more) if len(more) else reached

    def containers(self, nodes: np.ndarray) -> np.ndarray:
        """Every place that contains one of `nodes`, at every level (Manhattan: New York City, New York,
        the United States)."""
        return self._closed(nodes, 0)

    def contents(self, nodes: np.ndarray) -> np.ndarray:
        """Every place one of `nodes` contains, at every level (New York City: Manhattan, Brooklyn, ...)."""
        return self._closed(nodes, 1)

    def _closed(self, nodes: np.ndarray, way: int) -> np.ndarray:
        """The members of `nodes`' closures going up (0) or down (1)."""
        if not len(nodes):
            return nodes
        pointers, members = self.closures[way]
        return np.unique(members[concat_ranges(pointers[nodes], pointers[nodes + 1])])

    def literal(self, relation: str, direction: str, transitive: bool) -> bool:
        """Whether `reach` is the graph's own step: no containment closure and no relation reads alike."""
        return not transitive and (relation, direction) not in self.alike

    @cached_property
    def alike(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """Steps a reader cannot tell apart (synth.kg.alike)."""
        return alike_steps(self.kg)

    @cached_property
    def closures(self) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
        """For going up and going down: per node (CSR pointers, members) every node within
        CLOSURE_LEVELS containment steps that way, computed once."""
        found = []
        for family in self.families:
            neighbours: dict[int, set[int]] = {}
            for relation, way in family:
                index = self.kg.index(way)
                number = self.kg.relation_index[relation]
                for run in np.flatnonzero(index.run_rel == number).tolist():
                    node = int(np.searchsorted(index.run_ptr, run, side="right") - 1)
                    neighbours.setdefault(node, set()).update(index.run_neighbors(run).tolist())
            lists = []
            for node in range(self.kg.num_nodes):
                seen: set[int] = set()
                level = neighbours.get(node, set())
                for _ in range(CLOSURE_LEVELS + 1):
                    level = level - seen - {node}
                    if not level:
                        break
                    seen |= level
                    level = set().union(*(neighbours.get(other, set()) for other in level))
                lists.append(sorted(seen))
            pointers = np.zeros(self.kg.num_nodes + 1, dtype=np.int64)
            np.cumsum([len(members) for members in lists], out=pointers[1:])
            members = np.array([member for members in lists for member in members], dtype=np.int32)
            found.append((pointers, members))
        return found[0], found[1]

    @cached_property
    def families(self) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
        """(the containment relations going up, going down): each transitive relation goes up in the
        direction with fewer values per holder (a place has few containers, a container many places)."""
        up, down = [], []
        for relation in self.kg.relation_ids:
            if not self.profiles(relation, FORWARD).transitive:
                continue
            forward, inverse = self.statistics(relation, FORWARD), self.statistics(relation, INVERSE)
            if forward is None or inverse is None:
                continue
            rising = FORWARD if forward.mean <= inverse.mean else INVERSE
            falling = INVERSE if rising == FORWARD else FORWARD
            up.append((relation, rising))
            down.append((relation, falling))
        return up, down

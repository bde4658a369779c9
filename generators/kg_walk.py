"""Constrained random walks over the knowledge graph: the chains multi-hop questions are built on.

Constraints follow what makes questions good (MedResearcher-R1, WebSailor): seeds are rare or
mid-degree entities, no entity repeats, relations do not repeat within a walk, and hub entities
(above `max_degree` edges) are never stepped through, because chains through hubs are ambiguous.
Edges are walked in both directions. The relation of each step is drawn first and the neighbour
second, so frequent relations (profession, genre) do not crowd out the rest; with a world model, the
world-bounded relations are tried first most of the time (`prefer_bounded`), since their chains stay
unique in a world larger than the graph.
"""

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import Field

from synth.config import FrozenConfig
from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph
from synth.schemas import Hop
from synth.schemas.item import Direction

OPTIONS_KEPT = 100_000
"""Nodes whose steps a walker keeps (a few tens of MB; a larger graph starts over when full)."""


class WalkConfig(FrozenConfig):
    min_seed_degree: int = Field(default=2, ge=1, description="Seeds have at least this many edges.")
    max_seed_degree: int = Field(default=40, ge=1, description="Seeds have at most this many edges (rare entities).")
    max_degree: int = Field(default=400, ge=1, description="Never step onto an entity with more edges (hubs).")
    distinct_relations: bool = Field(default=True, description="No relation twice in one walk.")
    policy: Literal["random", "longest"] = Field(
        default="random",
        description="random: one random walk, dropped at a dead end; longest: depth-first search with "
        "backtracking from the rare seed for the longest simple chain within the hop radius (MedResearcher-R1).",
    )
    search_budget: int = Field(default=200, ge=1, description="Steps the longest policy may try from one seed.")
    prefer_bounded: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="Chance that a step tries the world-bounded relations first (the birthplace of X, the "
        "director of Z): chains of them stay unique in a world larger than the graph (synth.kg.multiplicity).",
    )


@dataclass(frozen=True)
class Walk:
    entities: tuple[str, ...]
    """e0 (the anchor) ... ek (the answer)."""
    hops: tuple[Hop, ...]


class RandomWalker:
    """Walks in node numbers over the graph's arrays (the hot path); hops come back as ids.

    Draws are made in sorted order (seeds, (relation, direction) options, neighbours), so a seed
    reproduces the same walks on the same snapshot.
    """

    def __init__(
        self,
        kg: KnowledgeGraph,
        config: WalkConfig,
        rng: random.Random,
        bounded: Callable[[str, str], bool] | None = None,
        soft: frozenset[str] = frozenset(),
    ):
        """`bounded(relation, direction)`: which steps stay small in a larger world, tried first
        with chance `prefer_bounded`; `soft`: relations no walk ends with (no reader can rule anyone
        out of them: synth.kg.relation_profile)."""
        self.kg = kg
        self.config = config
        self.rng = rng
        self.bounded = (
            {
                (number, direction)
                for number, relation in enumerate(kg.relation_ids)
                for direction in (FORWARD, INVERSE)
                if bounded(relation, direction)
            }
            if bounded is not None
            else set()
        )
        degrees = kg.degrees
        seeds = np.flatnonzero((degrees >= config.min_seed_degree) & (degrees <= config.max_seed_degree) & kg.named)
        self.seeds = seeds.tolist()
        self.steppable = (degrees <= config.max_degree) & kg.named
        """Nodes a walk may step onto: named, and not hubs."""
        self._visited = np.zeros(kg.num_nodes, dtype=bool)
        """Nodes on the walk in progress (reset after each walk)."""
        self._options_of: dict[int, list[tuple[int, Direction, int]]] = {}
        self.no_end = np.zeros(kg.num_nodes, dtype=bool)
        """Nodes a random walk may pass through but not end on (`avoid_ending`)."""
        self.soft = frozenset(number for number, relation in enumerate(kg.relation_ids) if relation in soft)
        """Relation numbers a random walk's last step does not take."""
        if not self.seeds:
            raise ValueError(self._no_seeds(degrees))

    def _no_seeds(self, degrees: np.ndarray) -> str:
        """Why no walk can start, with the counts that say which setting (or input) to change."""
        config, kg = self.config, self.kg
        named, linked = int(kg.named.sum()), int((degrees > 0).sum())
        in_range = int(((degrees >= config.min_seed_degree) & (degrees <= config.max_seed_degree)).sum())
        if named == 0:
            return (
                f"no walk can start: none of the {kg.num_nodes:,} nodes has a name; import the graph with an entity "
                "table, or re-import it (names default to ids)"
            )
        if linked == 0:
            literal = ", ".join(kg.literal_relations) or "none"
            return (
                f"no walk can start: the {kg.num_nodes:,} nodes have no walkable edges "
                f"(literal relations are not walked: {literal})"
            )
        return (
            f"no walk can start: of {kg.num_nodes:,} nodes, {named:,} are named, {linked:,} have walkable edges and "
            f"{in_range:,} have "
            f"{config.min_seed_degree}..{config.max_seed_degree} edges, but none is both named and in range; widen "
            "walk.min_seed_degree/max_seed_degree"
        )

    def avoid_ending(self, entity: str) -> None:
        """Walks no longer end on `entity` (an answer the caller gave up on): the last step picks
        another neighbour instead, so the walk is not thrown away after it is made."""
        node = self.kg.node_index.get(entity)
        if node is not None:
            self.no_end[node] = True

    def walk(self, hops: int) -> Walk | None:
        """One walk of exactly `hops` edges, or None when it reached a dead end. (Taking a dead end
        back and trying another relation finished three times as many 4-hop walks on the bundled
        graph, but they crowded onto the few branches that go on, and half their items were
        duplicates: more time per published item, not less.)"""
        seed = self.rng.choice(self.seeds)
        current, steps, used_relations = seed, [], set()
        self._visited[seed] = True
        try:
            for hop in range(hops):
                step = next(self._candidates(current, used_relations, last=hop == hops - 1), None)
                if step is None:
                    return None
                steps.append(step)
                relation, _, current = step
                self._visited[current] = True
                used_relations.add(relation)
        finally:
            self._visited[[seed] + [neighbor for _, _, neighbor in steps]] = False
        return self._as_walk(seed, steps)

    def chain(self, hops: int) -> Walk | None:
        """A walk of `hops` edges by the configured policy."""
        return self.walk(hops) if self.config.policy == "random" else self.longest(hops)

    def longest(self, radius: int) -> Walk | None:
        """The longest simple chain from a random seed within `radius` hops, found by randomized
        depth-first search with backtracking (at most `search_budget` steps tried); a chain of the
        full radius ends the search. None only if the seed has no usable edge at all."""
        seed = self.rng.choice(self.seeds)
        budget = self.config.search_budget
        best: list[tuple[int, Direction, int]] = []
        path: list[tuple[int, Direction, int]] = []
        self._visited[seed] = True

        def extend(current: int, used: set[int]) -> bool:
            nonlocal best, budget
            if len(path) > len(best):
                best = list(path)
            if len(path) == radius:
                return True
            for relation, direction, neighbor in self._candidates(current, used):
                if budget <= 0:
                    return False
                budget -= 1
                path.append((relation, direction, neighbor))
                self._visited[neighbor] = True
                found = extend(neighbor, used | {relation})
                self._visited[neighbor] = False
                path.pop()
                if found:
                    return True
            return False

        try:
            extend(seed, set())
        finally:
            self._visited[seed] = False
        return self._as_walk(seed, best) if best else None

    def _as_walk(self, seed: int, steps: list[tuple[int, Direction, int]]) -> Walk:
        """Node-number steps (relation, direction, neighbour) from `seed` as a Walk of ids."""
        kg, nodes, hops, current = self.kg, [seed], [], seed
        for relation, direction, neighbor in steps:
            head, tail = (current, neighbor) if direction == FORWARD else (neighbor, current)
            hops.append(
                Hop(
                    head=kg.node_ids[head],
                    relation=kg.relation_ids[relation],
                    tail=kg.node_ids[tail],
                    direction=direction,
                )
            )
            nodes.append(neighbor)
            current = neighbor
        return Walk(tuple(kg.node_ids[node] for node in nodes), tuple(hops))

    def _candidates(
        self, current: int, used_relations: set[int], last: bool = False
    ) -> Iterator[tuple[int, Direction, int]]:
        """(relation, direction, neighbour) steps from `current`, relations in random order and one
        random usable neighbour per relation, lazily; the `last` step of a walk not onto `no_end`, nor
        over a `soft` relation."""
        for relation, direction, run in self._options(current, used_relations):
            if last and relation in self.soft:
                continue
            neighbors = self.kg.index(direction).run_neighbors(run)
            usable = self.steppable[neighbors] & ~self._visited[neighbors]
            neighbors = neighbors[usable & ~self.no_end[neighbors] if last else usable]
            if len(neighbors):
                yield relation, direction, int(neighbors[self.rng.randrange(len(neighbors))])

    def _options(self, current: int, used_relations: set[int]) -> Iterator[tuple[int, Direction, int]]:
        """(relation, direction, run) steps from `current` in random order, drawn as they are asked
        for (a walk mostly takes the first); the world-bounded ones first with chance `prefer_bounded`."""
        options = self._node_options(current)
        if self.config.distinct_relations and used_relations:
            options = [option for option in options if option[0] not in used_relations]
        if self.bounded and self.rng.random() < self.config.prefer_bounded:
            yield from _drawn(self.rng, [option for option in options if (option[0], option[1]) in self.bounded])
            yield from _drawn(self.rng, [option for option in options if (option[0], option[1]) not in self.bounded])
        else:
            yield from _drawn(self.rng, list(options))

    def _node_options(self, current: int) -> list[tuple[int, Direction, int]]:
        """Every (relation, direction, run) of `current`, sorted (kept: walks pass the same nodes often)."""
        found = self._options_of.get(current)
        if found is None:
            if len(self._options_of) >= OPTIONS_KEPT:
                self._options_of.clear()
            found = []
            for direction in (FORWARD, INVERSE):
                relations, first_run = self.kg.index(direction).runs(current)
                found.extend(
                    (int(relation), direction, first_run + offset) for offset, relation in enumerate(relations)
                )
            found.sort()
            self._options_of[current] = found
        return found


def _drawn(rng: random.Random, items: list) -> Iterator:
    """`items` in random order, each drawn when asked for (Fisher-Yates, one step at a time): a
    caller that stops after the first pays for one draw, not a whole shuffle. Reorders `items`."""
    for index in range(len(items)):
        chosen = rng.randrange(index, len(items))
        items[index], items[chosen] = items[chosen], items[index]
        yield items[index]

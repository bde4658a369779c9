"""A knowledge-graph snapshot: compact arrays for the hot paths, networkx on demand.

Walkers and uniqueness checks ask "which entities are linked to X by relation R in direction D?"
millions of times. Python dicts or a networkx MultiDiGraph answer that at roughly a kilobyte per
edge; here each direction is a CSR index (entity -> runs of one relation -> neighbours) in int32
numpy arrays, about 24 bytes per edge, so a 5M-edge graph fits in a few hundred MB. Entities and
relations are numbered in sorted id order, so every listing below is in a stable, sorted order.
`kg.graph` builds the networkx MultiDiGraph the first time someone asks for it.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Final

import networkx as nx
import numpy as np

from synth.schemas import Entity, Relation, Step, Triple

FORWARD: Final = "forward"
INVERSE: Final = "inverse"
FACTS_KEPT = 500_000
"""`fact_nodes` answers a graph keeps before starting over."""


FEW_NODES = 8
"""`lookup_many` looks these few nodes up one by one (numpy's vector calls cost more than they save)."""

FEW_LOOKUPS = 64
"""`intersect` looks up to this many nodes up one by one in the other array (binary search)."""

STEPS_KEPT = 100_000
"""Steps from small frontiers `step_nodes` keeps before starting over: construction and the world
estimate step from the same few nodes over and over (753,136 steps of 200 plain items were 57,334
distinct ones)."""

KEPT_FRONTIER = 256
"""Frontiers up to this many nodes are kept by `step_nodes` (larger ones cost more to key than to step)."""


@dataclass(frozen=True)
class Adjacency:
    """One direction of the graph in CSR form, grouped by relation.

    For entity i, runs `run_ptr[i]:run_ptr[i+1]` each hold one relation `run_rel[r]` whose
    neighbours are `neighbors[run_start[r]:run_start[r+1]]` (sorted).
    """

    run_ptr: np.ndarray
    run_rel: np.ndarray
    run_start: np.ndarray
    neighbors: np.ndarray

    @classmethod
    def build(cls, source: np.ndarray, relation: np.ndarray, target: np.ndarray, num_nodes: int) -> "Adjacency":
        order = np.lexsort((target, relation, source))
        source, relation, target = source[order], relation[order], target[order]
        if len(source):
            same_run = (source[1:] == source[:-1]) & (relation[1:] == relation[:-1])
            keep = np.ones(len(source), dtype=bool)
            keep[1:] = ~(same_run & (target[1:] == target[:-1]))  # the same triple twice
            source, relation, target = source[keep], relation[keep], target[keep]
            new_run = np.ones(len(source), dtype=bool)
            new_run[1:] = (source[1:] != source[:-1]) | (relation[1:] != relation[:-1])
            starts = np.flatnonzero(new_run)
        else:
            starts = np.zeros(0, dtype=np.int64)
        run_source = source[starts]
        run_ptr = np.zeros(num_nodes + 1, dtype=np.int64)
        np.cumsum(np.bincount(run_source, minlength=num_nodes), out=run_ptr[1:])
        run_start = np.append(starts, len(source)).astype(np.int64)
        return cls(run_ptr, relation[starts].astype(np.int32), run_start, target.astype(np.int32))

    def runs(self, node: int) -> tuple[list[int], int]:
        """(relations leaving `node`, index of its first run): run i holds relations[i - first]."""
        lo, hi = int(self.run_ptr[node]), int(self.run_ptr[node + 1])
        return self.run_rel[lo:hi].tolist(), lo

    def run_neighbors(self, run: int) -> np.ndarray:
        return self.neighbors[self.run_start[run] : self.run_start[run + 1]]

    def lookup(self, node: int, relation: int) -> np.ndarray:
        lo, hi = int(self.run_ptr[node]), int(self.run_ptr[node + 1])
        position = lo + int(self.run_rel[lo:hi].searchsorted(relation))
        if position < hi and self.run_rel[position] == relation:
            return self.run_neighbors(position)
        return self.neighbors[:0]

    def edge_position(self, node: int, relation: int, target: int) -> int | None:
        """Where the edge node -relation-> target sits in `neighbors` (edge order), or None."""
        lo, hi = int(self.run_ptr[node]), int(self.run_ptr[node + 1])
        run = lo + int(self.run_rel[lo:hi].searchsorted(relation))
        if run >= hi or self.run_rel[run] != relation:
            return None
        start, end = int(self.run_start[run]), int(self.run_start[run + 1])
        found = start + int(self.neighbors[start:end].searchsorted(target))
        return found if found < end and int(self.neighbors[found]) == target else None

    def lookup_many(self, nodes: np.ndarray, relation: int) -> np.ndarray:
        """Sorted, distinct neighbours over `relation` of all `nodes`: a lookup each for a few nodes (three
        times faster under FEW_NODES), vectorized for more."""
        if len(nodes) <= FEW_NODES:
            found = [self.lookup(node, relation) for node in nodes.tolist()]
            found = [neighbors for neighbors in found if len(neighbors)]
            if len(found) <= 1:
                return found[0] if found else self.neighbors[:0]
            return np.unique(np.concatenate(found))
        runs = concat_ranges(self.run_ptr[nodes], self.run_ptr[nodes + 1])
        runs = runs[self.run_rel[runs] == relation]
        return np.unique(self.neighbors[concat_ranges(self.run_start[runs], self.run_start[runs + 1])])

    def edges_per_node(self) -> np.ndarray:
        return np.diff(self.run_start[self.run_ptr])

    @property
    def nbytes(self) -> int:
        return self.run_ptr.nbytes + self.run_rel.nbytes + self.run_start.nbytes + self.neighbors.nbytes


@dataclass
class KnowledgeGraph:
    entities: Mapping[str, Entity]
    """Named entities (an entity without a row here is still a node, named by its id): a dict, or
    an `EntityTable` for a memory-mapped graph."""
    relations: dict[str, Relation]
    snapshot: str
    node_ids: list[str] = field(repr=False)
    """Entity id of each node number, sorted."""
    relation_ids: list[str] = field(repr=False)
    """Relation id of each relation number, sorted."""
    out_index: Adjacency = field(repr=False)
    in_index: Adjacency = field(repr=False)
    source: Path | None = field(default=None, repr=False, compare=False)
    _facts: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """`fact_nodes` already looked up."""
    _steps: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """`step_nodes` already taken from small frontiers of several nodes."""
    """The folder or file it was loaded from (where its relation override file is looked for)."""

    # ---- construction ---------------------------------------------------------------------------

    @classmethod
    def from_arrays(
        cls,
        heads: Sequence[str],
        relations_of_triples: Sequence[str],
        tails: Sequence[str],
        entities: dict[str, Entity],
        relations: dict[str, Relation],
        snapshot: str,
    ) -> "KnowledgeGraph":
        """Build from parallel columns of ids (lists or pyarrow string arrays); a repeated triple counts once."""
        import pyarrow as pa
        import pyarrow.compute as pc

        heads, rels, tails = (
            pa.array(column, type=pa.string()) if not isinstance(column, (pa.Array, pa.ChunkedArray)) else column
            for column in (heads, relations_of_triples, tails)
        )
        nodes = pc.unique(pa.chunked_array([*_chunks(heads), *_chunks(tails)], type=pa.string()))  # pyright: ignore[reportAttributeAccessIssue]  (pyarrow's stubs lack compute functions)
        nodes = nodes.take(pc.sort_indices(nodes))  # pyright: ignore[reportAttributeAccessIssue]  (pyarrow's stubs lack compute functions)
        relation_values = pc.unique(pa.chunked_array(_chunks(rels), type=pa.string()))  # pyright: ignore[reportAttributeAccessIssue]  (pyarrow's stubs lack compute functions)
        relation_values = relation_values.take(pc.sort_indices(relation_values))  # pyright: ignore[reportAttributeAccessIssue]  (pyarrow's stubs lack compute functions)
        head_index = _numbers(heads, nodes)
        tail_index = _numbers(tails, nodes)
        relation_index = _numbers(rels, relation_values)
        node_count = len(nodes)
        return cls(
            entities=entities,
            relations=relations,
            snapshot=snapshot,
            node_ids=nodes.to_pylist(),
            relation_ids=relation_values.to_pylist(),
            out_index=Adjacency.build(head_index, relation_index, tail_index, node_count),
            in_index=Adjacency.build(tail_index, relation_index, head_index, node_count),
        )

    @classmethod
    def from_triples(
        cls, triples: Iterable[Triple], entities: dict[str, Entity], relations: dict[str, Relation], snapshot: str
    ) -> "KnowledgeGraph":
        triples = list(triples)
        return cls.from_arrays(
            [triple.head for triple in triples],
            [triple.relation for triple in triples],
            [triple.tail for triple in triples],
            entities,
            relations,
            snapshot,
        )

    def without_relations(self, excluded: Iterable[str]) -> "KnowledgeGraph":
        """The same snapshot minus the edges of `excluded` relations (same numbering, same
        snapshot id): what walkers may use, while evidence still cites the full graph's corpus."""
        drop = [self.relation_index[relation] for relation in excluded if relation in self.relation_index]
        if not drop:
            return self
        return self.without_edges(np.isin(self.edges()[1], drop))

    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(heads, relations, tails) of every edge as node and relation numbers, in out-index order
        (by head, then relation, then tail): the order edge masks use."""
        index = self.out_index
        heads = np.repeat(np.arange(self.num_nodes, dtype=np.int32), index.edges_per_node())
        return heads, np.repeat(index.run_rel, np.diff(index.run_start)), index.neighbors

    def edge_mask(self, facts: Iterable[tuple[str, str, str]]) -> np.ndarray:
        """A mask over the edges in out-index order marking these (head, relation, tail) facts (those
        the graph holds)."""
        mask = np.zeros(self.num_triples, dtype=bool)
        for head, relation, tail in facts:
            node, rel, target = self.node_index.get(head), self.relation_index.get(relation), self.node_index.get(tail)
            if node is None or rel is None or target is None:
                continue
            found = self.out_index.edge_position(node, rel, target)
            if found is not None:
                mask[found] = True
        return mask

    def without_edges(self, drop: np.ndarray) -> "KnowledgeGraph":
        """The same snapshot minus the edges `drop` marks (a mask over the edges in out-index order:
        by head, then relation, then tail), with the same numbering and snapshot id."""
        if not drop.any():
            return self
        keep = ~drop
        heads, relations, tails = (array[keep] for array in self.edges())
        return KnowledgeGraph(
            entities=self.entities,
            relations=self.relations,
            snapshot=self.snapshot,
            node_ids=self.node_ids,
            relation_ids=self.relation_ids,
            out_index=Adjacency.build(heads, relations, tails, self.num_nodes),
            in_index=Adjacency.build(tails, relations, heads, self.num_nodes),
            source=self.source,
        )

    # ---- numbering ------------------------------------------------------------------------------

    @cached_property
    def node_index(self) -> dict[str, int]:
        return {node: number for number, node in enumerate(self.node_ids)}

    @cached_property
    def relation_index(self) -> dict[str, int]:
        return {relation: number for number, relation in enumerate(self.relation_ids)}

    @cached_property
    def degrees(self) -> np.ndarray:
        """Edges per node, both directions (int64)."""
        return self.out_index.edges_per_node() + self.in_index.edges_per_node()

    @cached_property
    def named(self) -> np.ndarray:
        """Whether each node has an entity row (a name), as a boolean mask."""
        if hasattr(self.entities, "node_mask"):  # an EntityTable knows without a lookup per node
            return self.entities.node_mask()  # pyright: ignore[reportAttributeAccessIssue]
        return np.fromiter((node in self.entities for node in self.node_ids), dtype=bool, count=len(self.node_ids))

    @property
    def literal_relations(self) -> list[str]:
        """Relations whose tails are values (years, ratings, tags): cues, never walked through."""
        return sorted(relation for relation, record in self.relations.items() if record.literal)

    def index(self, direction: str) -> Adjacency:
        return self.out_index if direction == FORWARD else self.in_index

    # ---- queries by id --------------------------------------------------------------------------

    def name(self, entity_id: str) -> str:
        entity = self.entities.get(entity_id)
        return entity.name if entity else entity_id

    def aliases(self, entity_id: str) -> list[str]:
        """Other names of an entity the world gives (scorers accept them as answers)."""
        entity = self.entities.get(entity_id)
        return list(entity.aliases) if entity is not None else []

    def names(self, entity_id: str) -> list[str]:
        """The entity's name followed by its aliases: every string that names it."""
        return [self.name(entity_id), *self.aliases(entity_id)]

    def degree(self, entity_id: str) -> int:
        node = self.node_index.get(entity_id)
        return int(self.degrees[node]) if node is not None else 0

    def neighbors(self, entity_id: str, relation: str, direction: str) -> list[str]:
        """Entities reached from `entity_id` over `relation` (forward: as head; inverse: as tail), sorted."""
        node, rel = self.node_index.get(entity_id), self.relation_index.get(relation)
        if node is None or rel is None:
            return []
        return [self.node_ids[number] for number in self.index(direction).lookup(node, rel).tolist()]

    def incident(self, entity_id: str) -> list[tuple[str, str]]:
        """Every (relation, direction) that leaves `entity_id`, sorted."""
        node = self.node_index.get(entity_id)
        if node is None:
            return []
        pairs = [(self.relation_ids[rel], FORWARD) for rel in self.out_index.runs(node)[0]]
        pairs += [(self.relation_ids[rel], INVERSE) for rel in self.in_index.runs(node)[0]]
        return sorted(pairs)

    def follow(self, anchor: str, steps: Iterable[Step]) -> set[str]:
        """All entities reachable from `anchor` by `steps`, where each step's entities must also
        have that step's facts (`Step.where`); intermediates are otherwise unconstrained."""
        return self.ids(self.frontiers(anchor, steps)[-1])

    def frontiers(self, anchor: str, steps: Iterable[Step]) -> list[np.ndarray]:
        """Node numbers (sorted) at the anchor and after each step of following `steps` from it."""
        node = self.node_index.get(anchor)
        reached = [np.array([node] if node is not None else [], dtype=np.int32)]
        for step in steps:
            reached.append(self.expand(reached[-1], [step]))
        return reached

    def matching(self, constraints: Iterable) -> np.ndarray:
        """Node numbers (sorted) of the entities every constraint (anchor + steps) reaches."""
        matched = None
        for constraint in constraints:
            nodes = self.frontiers(constraint.anchor, constraint.steps)[-1]
            matched = nodes if matched is None else np.intersect1d(matched, nodes, assume_unique=True)
        return matched if matched is not None else np.zeros(0, dtype=np.int32)

    def expand(self, frontier: np.ndarray, steps: Iterable[Step]) -> np.ndarray:
        """Node numbers reached from the node numbers `frontier` by `steps`, facts applied."""
        for step in steps:
            frontier = self.step_nodes(frontier, step.relation, step.direction)
            for fact in step.where:
                frontier = np.intersect1d(
                    frontier, self.fact_nodes(fact.anchor, fact.relation, fact.direction), assume_unique=True
                )
        return frontier

    def fact_nodes(self, anchor: str, relation: str, direction: str) -> np.ndarray:
        """Node numbers (sorted) of the entities reached from the one entity `anchor` (kept: construction
        asks for the same facts walk after walk; callers never change the array)."""
        key = (anchor, relation, direction)
        found = self._facts.get(key)
        if found is None:
            if len(self._facts) >= FACTS_KEPT:
                self._facts.clear()
            node = self.node_index.get(anchor)
            found = self.step_nodes(np.array([node] if node is not None else [], dtype=np.int32), relation, direction)
            found = self._facts[key] = read_only(found)
        return found

    def step_nodes(self, frontier: np.ndarray, relation: str, direction: str) -> np.ndarray:
        """Sorted, distinct node numbers reached from `frontier` over `relation` in `direction`."""
        rel = self.relation_index.get(relation)
        if rel is None or not len(frontier):
            return frontier[:0]
        index = self.index(direction)
        if len(frontier) == 1:
            return index.lookup(int(frontier[0]), rel)
        return kept_step(self._steps, frontier, (rel, direction), lambda: index.lookup_many(frontier, rel))

    def ids(self, nodes: np.ndarray) -> set[str]:
        return {self.node_ids[number] for number in nodes.tolist()}

    def has_edge(self, head: str, relation: str, tail: str) -> bool:
        node, rel, target = self.node_index.get(head), self.relation_index.get(relation), self.node_index.get(tail)
        if node is None or rel is None or target is None:
            return False
        return self.out_index.edge_position(node, rel, target) is not None

    def triples(self) -> Iterable[tuple[str, str, str]]:
        """Every (head, relation, tail), sorted."""
        index = self.out_index
        for node in range(len(self.node_ids)):
            for run in range(int(index.run_ptr[node]), int(index.run_ptr[node + 1])):
                relation = self.relation_ids[int(index.run_rel[run])]
                for tail in index.run_neighbors(run).tolist():
                    yield self.node_ids[node], relation, self.node_ids[tail]

    @property
    def num_triples(self) -> int:
        return len(self.out_index.neighbors)

    @property
    def num_nodes(self) -> int:
        return len(self.node_ids)

    @property
    def nbytes(self) -> int:
        """Bytes held by the adjacency arrays (not the id strings or entity records)."""
        return self.out_index.nbytes + self.in_index.nbytes

    @cached_property
    def graph(self) -> nx.MultiDiGraph:
        """The graph as a networkx MultiDiGraph (edge key = relation), built on first use: for
        analysis with networkx's algorithms; the walkers use the arrays."""
        graph = nx.MultiDiGraph()
        graph.add_nodes_from(self.node_ids)
        graph.add_edges_from((head, tail, relation) for head, relation, tail in self.triples())  # pyright: ignore[reportArgumentType]
        return graph


def intersect(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """`np.intersect1d(first, second, assume_unique=True)` of sorted, distinct node arrays, by looking
    the smaller one's nodes up in the larger where it is small (construction intersects a few
    candidates with many facts, and numpy's sort-based intersection costs more there)."""
    if len(first) > len(second):
        first, second = second, first
    if len(first) == 1:
        position = int(second.searchsorted(first[0]))
        return first if position < len(second) and second[position] == first[0] else first[:0]
    if len(first) <= FEW_LOOKUPS:
        positions = np.minimum(second.searchsorted(first), len(second) - 1)
        return first[second[positions] == first]
    return np.intersect1d(first, second, assume_unique=True)


def kept_step(kept: dict, frontier: np.ndarray, step: tuple, take: Callable[[], np.ndarray]) -> np.ndarray:
    """`take()`, the nodes a step from `frontier` reaches, kept in `kept` by the frontier's nodes and
    `step` where the frontier is small (STEPS_KEPT of them, then started over), read-only."""
    if len(frontier) > KEPT_FRONTIER:
        return take()
    key = (frontier.dtype.char, frontier.tobytes(), *step)
    found = kept.get(key)
    if found is None:
        if len(kept) >= STEPS_KEPT:
            kept.clear()
        found = kept[key] = read_only(take())
    return found


def read_only(nodes: np.ndarray) -> np.ndarray:
    """A view of `nodes` that no caller can change (what the graph's caches hand out)."""
    view = nodes.view()
    view.flags.writeable = False
    return view


def concat_ranges(starts: np.ndarray, stops: np.ndarray) -> np.ndarray:
    """The concatenation of arange(start, stop) for each pair, vectorized."""
    lengths = stops - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    return np.repeat(starts - np.cumsum(lengths) + lengths, lengths) + np.arange(total)


def _chunks(column) -> list:
    return list(column.chunks) if hasattr(column, "chunks") else [column]


def _numbers(column, values) -> np.ndarray:
    import pyarrow.compute as pc

    return pc.index_in(column, value_set=values).to_numpy(zero_copy_only=False).astype(np.int32)  # pyright: ignore[reportAttributeAccessIssue]  (pyarrow's stubs lack compute functions)

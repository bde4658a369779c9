"""An imported graph saved as arrays that load memory-mapped, so a big graph opens in seconds.

Loading from DuckDB rebuilds everything each run: the CSR indexes (two sorts of every edge) and a
Python record per entity, about ten times the adjacency's own size and most of a minute at 20M
edges. Here both directions' CSR arrays are `.npy` files opened with `mmap_mode="r"`, node and
relation ids and entity texts are Arrow IPC files read zero-copy, and entities become records only
when someone asks for one (`EntityTable`). The folder sits beside the `.duckdb` file, is written
whole or not at all (staging folder, then rename), and names the snapshot it was made from, so a
re-imported graph never loads stale arrays.
"""

import json
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np
import pyarrow as pa
from pyarrow import ipc

from synth.kg.graph import Adjacency, KnowledgeGraph
from synth.schemas import Entity, Relation

FORMAT = 1
_ADJACENCY_FIELDS = ("run_ptr", "run_rel", "run_start", "neighbors")


class EntityTable(Mapping):
    """Entities by id, as Arrow columns aligned with the graph's node numbers (a null name: an
    unnamed node), plus `extra` named entities that have no edge. An `Entity` is built per lookup."""

    def __init__(self, node_index: Mapping[str, int], node_ids: list[str], columns: pa.Table, extra: dict[str, Entity]):
        self._node_index, self._node_ids, self._extra = node_index, node_ids, extra
        self._names = columns.column("name").combine_chunks()
        self._descriptions = columns.column("description").combine_chunks()
        self._aliases = columns.column("aliases").combine_chunks()
        self._named = np.flatnonzero(self.node_mask())

    def __getitem__(self, entity_id: str) -> Entity:
        node = self._node_index.get(entity_id)
        if node is None or not self._names[node].is_valid:
            return self._extra[entity_id]
        return Entity.model_construct(
            id=entity_id,
            name=self._names[node].as_py(),
            description=self._descriptions[node].as_py() or "",
            aliases=self._aliases[node].as_py() or [],
        )

    def __contains__(self, entity_id: object) -> bool:
        node = self._node_index.get(entity_id)  # type: ignore[arg-type]
        return (node is not None and self._names[node].is_valid) or entity_id in self._extra

    def __iter__(self) -> Iterator[str]:
        for node in self._named.tolist():
            yield self._node_ids[node]
        yield from self._extra

    def __len__(self) -> int:
        return len(self._named) + len(self._extra)

    def node_mask(self) -> np.ndarray:
        """Whether each node number has an entity (a name)."""
        return self._names.is_valid().to_numpy(zero_copy_only=False)


def arrays_folder(duckdb_path: Path) -> Path:
    return duckdb_path.with_name(f"{duckdb_path.stem}.arrays")


def save_arrays(kg: KnowledgeGraph, folder: Path) -> None:
    """Write `kg` to `folder` (replacing what is there) through a staging folder."""
    staging = folder.with_name(f".{folder.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for direction, index in (("out", kg.out_index), ("in", kg.in_index)):
        for name in _ADJACENCY_FIELDS:
            np.save(staging / f"{direction}_{name}.npy", np.ascontiguousarray(getattr(index, name)))
    rows = [kg.entities.get(node) for node in kg.node_ids]
    _write(
        staging / "nodes.arrow",
        pa.table(
            {
                "id": pa.array(kg.node_ids, type=pa.string()),
                "name": pa.array([row.name if row else None for row in rows], type=pa.string()),
                "description": pa.array([row.description if row else None for row in rows], type=pa.string()),
                "aliases": pa.array([row.aliases if row else None for row in rows], type=pa.list_(pa.string())),
            }
        ),
    )
    nodes = set(kg.node_ids)
    extra = [entity.model_dump(mode="json") for entity_id, entity in kg.entities.items() if entity_id not in nodes]
    relations = [relation.model_dump(mode="json") for relation in kg.relations.values()]
    (staging / "meta.json").write_text(
        json.dumps(
            {
                "format": FORMAT,
                "snapshot": kg.snapshot,
                "relation_ids": kg.relation_ids,
                "relations": relations,
                "extra_entities": extra,
            }
        )
    )
    shutil.rmtree(folder, ignore_errors=True)
    staging.rename(folder)


def load_arrays(folder: Path, snapshot: str) -> KnowledgeGraph | None:
    """The graph saved in `folder` if it was saved from `snapshot` in this format, else None."""
    meta_path = folder / "meta.json"
    if not meta_path.is_file():
        return None
    meta = json.loads(meta_path.read_text())
    if meta.get("format") != FORMAT or meta.get("snapshot") != snapshot:
        return None
    indexes = {
        direction: Adjacency(
            *(np.load(folder / f"{direction}_{name}.npy", mmap_mode="r") for name in _ADJACENCY_FIELDS)
        )
        for direction in ("out", "in")
    }
    with pa.memory_map(str(folder / "nodes.arrow")) as source:
        columns = ipc.open_file(source).read_all()
    node_ids = columns.column("id").to_pylist()
    kg = KnowledgeGraph(
        entities={},
        relations={row["id"]: Relation.model_construct(**row) for row in meta["relations"]},
        snapshot=snapshot,
        node_ids=node_ids,
        relation_ids=meta["relation_ids"],
        out_index=indexes["out"],
        in_index=indexes["in"],
    )
    extra = {row["id"]: Entity.model_construct(**row) for row in meta["extra_entities"]}
    kg.entities = EntityTable(kg.node_index, node_ids, columns, extra)
    return kg


def _write(path: Path, table: pa.Table) -> None:
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)

"""Imported knowledge graphs: one DuckDB file per snapshot under `$SYNTH_HOME/kg/`.

Tables `triples(head, relation, tail)`, `entities(id, name, description, aliases)` (aliases "|"-separated),
`relations(id, forward, inverse, head_type, tail_type, phrase_source, literal, head_role, tail_role)` and a one-row
`snapshot`
(name, snapshot id, import time, sources, counts). One file per snapshot, not tables in the
catalog, because DuckDB allows one writer per file: importing a graph never blocks a run that
publishes, and any number of runs may read a graph at once. A file is written under a temporary
name and renamed into place, so a snapshot exists whole or not at all.
"""

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
from filelock import FileLock

from synth.errors import ConfigError, NotFoundError
from synth.kg.arrays import arrays_folder, load_arrays, save_arrays
from synth.kg.graph import KnowledgeGraph
from synth.kg.readers import split_aliases
from synth.schemas import Entity, Relation

SUFFIX = ".duckdb"


def snapshot_path(kg_dir: Path, name: str) -> Path:
    return kg_dir / f"{name}{SUFFIX}"


def list_snapshots(kg_dir: Path) -> list[dict]:
    """The `snapshot` row of every imported graph, by name."""
    rows = []
    for path in sorted(kg_dir.glob(f"*{SUFFIX}")) if kg_dir.is_dir() else []:
        rows.append(read_meta(path))
    return rows


def read_meta(path: Path) -> dict:
    import duckdb

    with duckdb.connect(str(path), read_only=True) as connection:
        row = connection.execute("select name, snapshot_id, imported_at, sources, counts from snapshot").fetchone()
    if row is None:
        raise ConfigError(f"{path} has no snapshot row: it is not a whole graph import; import the graph again")
    name, snapshot_id, imported_at, sources, counts = row
    return {
        "name": name,
        "snapshot_id": snapshot_id,
        "imported_at": imported_at,
        "sources": json.loads(sources),
        "counts": json.loads(counts),
        "path": str(path),
    }


def load_graph(path: Path, log: Callable[[str], None] = print) -> KnowledgeGraph:
    """An imported snapshot as a KnowledgeGraph: memory-mapped from its arrays folder
    (`synth.kg.arrays`), which the first load after an import writes."""
    import duckdb

    if not path.is_file():
        raise NotFoundError(
            f"no imported knowledge graph at {path}; see `synth kg list`, or import one with `synth kg import`"
        )
    with duckdb.connect(str(path), read_only=True) as connection:
        snapshot_id = connection.execute("select snapshot_id from snapshot").fetchall()[0][0]
    folder = arrays_folder(path)
    try:
        kg = load_arrays(folder, snapshot_id)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as error:  # damaged: report, rebuild
        log(f"{folder} is damaged ({type(error).__name__}: {error}); rebuilding it from {path.name}")
        kg = None
    if kg is not None:
        kg.source = path
        return kg
    kg = _load_from_duckdb(path)
    kg.source = path
    try:
        with FileLock(str(folder.with_name(f".{folder.name}.lock"))):
            save_arrays(kg, folder)
    except OSError as error:  # a read-only graph folder still loads, only slower
        log(f"could not save {folder} for fast loading ({error}); the graph loads from {path.name} each time")
    return kg


def _load_from_duckdb(path: Path) -> KnowledgeGraph:
    import duckdb

    with duckdb.connect(str(path), read_only=True) as connection:
        snapshot_id = connection.execute("select snapshot_id from snapshot").fetchall()[0][0]
        triples = connection.sql("select head, relation, tail from triples").to_arrow_table()
        columns = {row[0] for row in connection.execute("describe entities").fetchall()}
        aliases = "aliases" if "aliases" in columns else "''"  # graphs imported before aliases were kept
        entity_rows = connection.execute(f"select id, name, description, {aliases} from entities").fetchall()
        relation_columns = {row[0] for row in connection.execute("describe relations").fetchall()}
        extra = "literal, head_role, tail_role" if "literal" in relation_columns else "false, '', ''"  # older imports
        relation_rows = connection.execute(
            f"select id, forward, inverse, head_type, tail_type, {extra} from relations"
        ).fetchall()
    # Rows were validated on import; model_construct skips re-validating millions of them.
    entities = {
        row[0]: Entity.model_construct(id=row[0], name=row[1], description=row[2] or "", aliases=split_aliases(row[3]))
        for row in entity_rows
    }
    relations = {
        row[0]: Relation.model_construct(
            id=row[0],
            forward=row[1],
            inverse=row[2] or "",
            head_type=row[3] or "",
            tail_type=row[4] or "",
            literal=bool(row[5]),
            head_role=row[6] or "",
            tail_role=row[7] or "",
        )
        for row in relation_rows
    }
    return KnowledgeGraph.from_arrays(
        triples.column("head"), triples.column("relation"), triples.column("tail"), entities, relations, snapshot_id
    )


def resolve_kg(reference: str | Path | None, kg_dir: Path) -> Path | None:
    """What `kg=` names: None (the bundled graph), a snapshot folder or .duckdb file, or an imported name."""
    if reference is None or str(reference) == "":
        return None
    path = Path(reference)
    if path.exists():
        return path
    candidate = snapshot_path(kg_dir, str(reference))
    if candidate.is_file():
        return candidate
    known = ", ".join(row["name"] for row in list_snapshots(kg_dir)) or "none"
    raise ConfigError(
        f"knowledge graph {str(reference)!r} is neither a path nor an imported graph (imported: {known}); "
        "import it with `synth kg import NAME --triples FILE`"
    )

"""Read a knowledge-graph snapshot folder: the format of the bundled default and of `synth kg import`.

triples.tsv[.gz]    head<TAB>relation<TAB>tail (header row)
entities.tsv[.gz]   id<TAB>name<TAB>description[<TAB>aliases, "|"-separated] (header row)
relations.tsv       id<TAB>forward<TAB>inverse<TAB>head_type<TAB>tail_type[<TAB>head_role<TAB>tail_role<TAB>literal
...] (header row)
manifest.json       {"snapshot_id": ..., ...}
"""

import csv
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

from synth.errors import ConfigError, InputFileError, NotFoundError
from synth.kg.graph import KnowledgeGraph
from synth.kg.readers import parse_flag, split_aliases
from synth.kg.store import load_graph, resolve_kg
from synth.schemas import Entity, Relation
from synth.textfiles import text_lines

BUNDLED = "fb15k237"


def bundled_path() -> Path:
    """The bundled default snapshot (FB15k-237, plain relations), shipped inside the package."""
    return Path(str(resources.files("synth.data") / BUNDLED))


def _open(folder: Path, stem: str):
    """The checked lines of `stem` (or `stem.gz`) in a snapshot folder, as a context manager."""
    for candidate in (folder / stem, folder / f"{stem}.gz"):
        if candidate.exists():
            return text_lines(candidate)
    raise NotFoundError(f"knowledge-graph snapshot {folder} has no {stem} (or {stem}.gz)")


def _rows(folder: Path, stem: str) -> Iterator[dict[str, str]]:
    with _open(folder, stem) as handle:
        reader = csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE)
        yield from reader


def load_snapshot(folder: Path | str | None = None) -> KnowledgeGraph:
    """Load a snapshot folder (default: the bundled one) into a KnowledgeGraph
    (`kg.without_relations(...)` drops relations afterwards)."""
    folder = Path(folder) if folder is not None else bundled_path()
    if not folder.is_dir():
        if folder.exists():
            raise InputFileError(
                f"knowledge-graph folder {folder} is a file, not a snapshot folder; pass the folder `synth kg import` "
                "wrote, or omit it for the bundled default"
            )
        raise NotFoundError(
            f"knowledge-graph folder {folder} does not exist; pass a snapshot folder or omit it for the bundled default"
        )
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    relations = {
        row["id"]: Relation(
            id=row["id"],
            forward=row["forward"],
            inverse=row["inverse"],
            head_type=row.get("head_type") or "",
            tail_type=row.get("tail_type") or "",
            head_role=row.get("head_role") or "",
            tail_role=row.get("tail_role") or "",
            literal=parse_flag(row.get("literal")),
        )
        for row in _rows(folder, "relations.tsv")
    }
    entities = {
        row["id"]: Entity(
            id=row["id"],
            name=row["name"],
            description=row.get("description") or "",
            aliases=split_aliases(row.get("aliases")),
        )
        for row in _rows(folder, "entities.tsv")
    }
    heads, relation_column, tails = [], [], []
    for row in _rows(folder, "triples.tsv"):
        heads.append(row["head"])
        relation_column.append(row["relation"])
        tails.append(row["tail"])
    unknown = sorted(set(relation_column) - set(relations))
    if unknown:
        raise ConfigError(
            f"{folder}: relations without phrases in relations.tsv: {', '.join(unknown[:5])}; add a row for each"
        )
    snapshot = manifest.get("snapshot_id") or folder.name
    kg = KnowledgeGraph.from_arrays(heads, relation_column, tails, entities, relations, snapshot)
    kg.source = folder
    return kg


def load_kg(reference: str | Path | None, kg_dir: Path) -> KnowledgeGraph:
    """The graph `kg=` names: None for the bundled default, a snapshot folder, a .duckdb file, or
    the name of a graph imported with `synth kg import`."""
    path = resolve_kg(reference, kg_dir)
    return load_graph(path) if path is not None and path.is_file() else load_snapshot(path)

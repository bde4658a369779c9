"""What `synth browse` shows, read from the store as it is: the catalog for datasets and versions,
and a version's own Parquet parts through DuckDB for its rows, with filters, counts and pages
pushed down to DuckDB (a page of a large version reads one page, not the version).

Every query runs on a private in-memory DuckDB under `synth sql`'s sandbox (files under the datasets
folder only, no network, the web console's bounds), with values bound as parameters, never pasted
into SQL.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synth.errors import CatalogError, SynthError
from synth.kg.graph import KnowledgeGraph
from synth.kg.snapshot import load_kg
from synth.schemas import DatasetVersion, Document, Trajectory
from synth.search.corpus import KGCorpus
from synth.search.corpus_store import PassageTable, read_meta
from synth.search.world import corpus_store
from synth.settings import Settings
from synth.store.arrow_schema import from_row
from synth.store.catalog import Catalog
from synth.store.reader import shard_glob
from synth.store.sandbox import WEB_BOUNDS, private_database

PAGE_SIZE = 50
ITEM_COLUMNS = ["id", "question", "answer", "hops", "difficulty", "recipe", "style", "family"]
DERIVED = (
    "json_extract_string(metadata, '$.style') as style, "
    "case when starts_with(path[-1].relation, '/') then split_part(trim(path[-1].relation, '/'), '/', 1) "
    "else path[-1].relation end as family"
)
"""Columns the items table derives: the question's style (from its metadata) and its relation family (the
domain of the relation that reaches the answer, as `synth eval` groups them). Computed for the rows a
page reads; filtering on them scans the version, like a text search."""


@dataclass(frozen=True)
class ItemFilter:
    """What the items table is narrowed to; every field optional."""

    text: str = ""
    """Case-insensitive substring of the question or the answer."""
    hops: int | None = None
    difficulty: str = ""
    style: str = ""
    family: str = ""

    def sql(self) -> tuple[str, list[Any]]:
        """A where clause and its parameters."""
        clauses, parameters = [], []
        if self.text:
            clauses.append("(question ilike ? or answer ilike ?)")
            pattern = "%" + self.text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            parameters += [pattern, pattern]
        if self.hops is not None:
            clauses.append("hops = ?")
            parameters.append(self.hops)
        for column in ("difficulty", "style", "family"):
            if getattr(self, column):
                clauses.append(f"{column} = ?")
                parameters.append(getattr(self, column))
        return (" where " + " and ".join(clauses)) if clauses else "", parameters


@dataclass
class Page:
    rows: list[dict[str, Any]]
    total: int
    """Rows matching the filter, in all."""
    number: int
    size: int = PAGE_SIZE
    facets: dict[str, list[tuple[Any, int]]] = field(default_factory=dict)
    """Column -> (value, count) over the whole version, for the filter menus."""

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.size))


def query_files(settings: Settings, sql: str, parameters: list[Any], **files: Path) -> list[dict[str, Any]]:
    """Rows of `sql`, in which `{name}` stands for the Parquet files `files[name]` (a path or a glob),
    on a fresh DuckDB connection under `synth sql`'s sandbox."""
    sources = {name: "read_parquet('" + str(path).replace("'", "''") + "')" for name, path in files.items()}
    with private_database(settings, WEB_BOUNDS) as connection:
        cursor = connection.execute(sql.format(**sources), parameters)
        names = [column[0] for column in cursor.description or []]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


class StoreView:
    """Read-only access to one data root for the pages."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._graphs: dict[tuple[str | None, str], KnowledgeGraph | None] = {}
        self._corpora: dict[str, PassageTable | None] = {}
        self._whole: dict[tuple, Any] = {}
        """Figures over a whole version (facets, labels by hops): a published version never changes."""

    def graph(self, version: DatasetVersion) -> KnowledgeGraph | None:
        """The knowledge graph the version was built from, for entity names (loaded once; None when
        the version has none, or the graph its config names is no longer that snapshot)."""
        if version.kg_snapshot is None:
            return None
        config = version.config
        reference = (config.get("world") or {}).get("kg", config.get("kg"))
        key = (reference, version.kg_snapshot)
        if key not in self._graphs:
            try:
                graph = load_kg(reference, self.settings.kg_path)
            except SynthError:
                graph = None
            self._graphs[key] = graph if graph is not None and graph.snapshot == version.kg_snapshot else None
        return self._graphs[key]

    def entity_name(self, version: DatasetVersion) -> Callable[[str], str]:
        """An entity id's name in the version's graph (the id itself without the graph)."""
        graph = self.graph(version)
        return graph.name if graph is not None else str

    def relation_phrase(self, version: DatasetVersion) -> Callable[[str], str]:
        """How the graph words a relation ("was born in"), or its id's last part without the graph."""
        graph = self.graph(version)

        def phrase(relation: str) -> str:
            known = graph.relations.get(relation) if graph is not None else None
            return known.forward if known is not None else relation.rstrip("/").rsplit("/", 1)[-1].replace("_", " ")

        return phrase

    def passages(self, version: DatasetVersion, doc_ids: list[str]) -> list[tuple[str, Document | None]]:
        """Each evidence id with its passage: from the corpus store the version's agents searched
        (matched by fingerprint), else from the version's graph; None when neither is here."""
        table = self._corpus(version)
        graph = self.graph(version)
        from_graph = KGCorpus(graph) if graph is not None else None
        found = []
        for doc_id in doc_ids:
            position = table.position(doc_id) if table is not None else None
            passage = table.passage(position) if table is not None and position is not None else None
            if passage is None and from_graph is not None:
                passage = from_graph.document(doc_id)
            found.append((doc_id, passage))
        return found

    def _corpus(self, version: DatasetVersion) -> PassageTable | None:
        """The stored corpus whose fingerprint the version's summary records, opened read-only (once)."""
        fingerprint = (version.summary.get("retriever") or {}).get("corpus_fingerprint")
        if not fingerprint:
            return None
        if fingerprint not in self._corpora:
            self._corpora[fingerprint] = None
            for folder in sorted(corpus_store(self.settings).glob("*/corpus.json")):
                try:
                    if read_meta(folder.parent).get("fingerprint") == fingerprint:
                        self._corpora[fingerprint] = PassageTable.open(folder.parent)
                        break
                except (OSError, ValueError):
                    continue  # a damaged store is another run's to rebuild; the graph can still answer
        return self._corpora[fingerprint]

    def versions(self, name: str | None = None) -> list[DatasetVersion]:
        with Catalog.open(self.settings, read_only=True) as catalog:
            return catalog.versions(name)

    def version(self, ref: str) -> DatasetVersion:
        """The version `ref` names (NAME@N or NAME for the newest); NotFoundError otherwise."""
        with Catalog.open(self.settings, read_only=True) as catalog:
            return catalog.resolve(ref)

    def previous(self, version: DatasetVersion) -> DatasetVersion | None:
        """What a diff compares the version with: its parent, else the dataset's version before it."""
        if version.parent:
            try:
                return self.version(version.parent)
            except SynthError:
                pass
        earlier = [other for other in self.versions(version.name) if other.version < version.version]
        return max(earlier, key=lambda other: other.version) if earlier else None

    def _query(self, version: DatasetVersion, table: str, sql: str, parameters: list[Any]) -> list[dict[str, Any]]:
        """`sql` with `{parts}` standing for the version's parts of `table`; a part that fails to read
        is a CatalogError naming the version (the page says so; the rest of the store browses)."""
        import duckdb

        parts = shard_glob(self.settings, version, table)
        try:
            return query_files(self.settings, sql, parameters, parts=parts)
        except duckdb.Error as error:  # the SQL is ours: a failure is a part that does not read
            raise CatalogError(
                f"{version.ref} cannot be read: {str(error).splitlines()[0]}; `synth datasets verify {version.ref}` "
                "checks its parts"
            ) from None

    def items(self, version: DatasetVersion, where: ItemFilter, number: int, size: int = PAGE_SIZE) -> Page:
        """Page `number` (from 1) of the version's items that match `where`, in stored order."""
        clause, parameters = where.sql()
        rows_of = "(select *, " + DERIVED + " from {parts})"
        total = self._query(version, "items", f"select count(*) as n from {rows_of}{clause}", parameters)[0]["n"]
        number = max(1, min(number, max(1, -(-total // size))))
        columns = ", ".join(ITEM_COLUMNS)
        rows = self._query(
            version,
            "items",
            f"select {columns} from {rows_of}{clause} limit ? offset ?",
            [*parameters, size, (number - 1) * size],
        )
        facets = {column: self._facet(version, column) for column in ("hops", "difficulty")}
        return Page(rows, total, number, size, facets)

    def _once(self, version: DatasetVersion, what: str, compute: Callable[[], Any]) -> Any:
        """`compute()` the first time `what` is asked of this version, kept after that."""
        key = (version.name, version.version, version.created_at, what)
        if key not in self._whole:
            self._whole[key] = compute()
        return self._whole[key]

    def _facet(self, version: DatasetVersion, column: str) -> list[tuple[Any, int]]:
        def count() -> list[tuple[Any, int]]:
            sql = f"select {column} as value, count(*) as n from {{parts}} group by 1 order by 1"
            return [(row["value"], row["n"]) for row in self._query(version, "items", sql, [])]

        return self._once(version, column, count)

    def labels_by_hops(self, version: DatasetVersion) -> dict[int, dict[str, int]]:
        """Hop count -> difficulty label -> items: the mix a version's chart draws."""
        return self._once(version, "labels_by_hops", lambda: self._labels_by_hops(version))

    def _labels_by_hops(self, version: DatasetVersion) -> dict[int, dict[str, int]]:
        mix: dict[int, dict[str, int]] = {}
        rows = self._query(
            version, "items", "select hops, difficulty, count(*) as n from {parts} group by all order by all", []
        )
        for row in rows:
            mix.setdefault(row["hops"], {})[row["difficulty"]] = row["n"]
        return mix

    def item(self, version: DatasetVersion, item_id: str) -> dict[str, Any] | None:
        rows = self._query(version, "items", "select * from {parts} where id = ?", [item_id])
        return rows[0] if rows else None

    def attempts(self, version: DatasetVersion, item_id: str) -> list[dict[str, Any]]:
        return self._query(
            version,
            "attempts",
            "select solver, model, condition, sample_index, answer, correct, match, num_tool_calls, failure, "
            "trajectory_id from {parts} where item_id = ? order by solver, condition, sample_index",
            [item_id],
        )

    def trajectory(self, version: DatasetVersion, trajectory_id: str) -> Trajectory | None:
        """One stored trajectory, validated (its messages as records, arguments and all)."""
        rows = self._query(version, "trajectories", "select * from {parts} where id = ?", [trajectory_id])
        return from_row(Trajectory, rows[0]) if rows else None

    def trajectories_of(self, version: DatasetVersion, item_id: str) -> list[dict[str, Any]]:
        """The item's trajectories in brief: who made them, how they ended."""
        return self._query(
            version,
            "trajectories",
            "select id, role, model, sample_index, final_answer, correct, num_tool_calls, finish_reason from {parts} "
            "where item_id = ? order by role, model, sample_index",
            [item_id],
        )

    def verdicts(self, version: DatasetVersion, item_id: str) -> list[dict[str, Any]]:
        return self._query(version, "verdicts", "select filter, kept, reason from {parts} where item_id = ?", [item_id])

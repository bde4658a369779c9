"""What `synth browse` shows, read from the store as it is: the catalog for datasets and versions,
and a version's own Parquet parts through DuckDB for its rows, with filters, counts and pages
pushed down to DuckDB (a page of a large version reads one page, not the version).

Every query runs on a fresh in-memory DuckDB connection under `synth sql`'s sandbox (files under
the datasets folder only, no network), with values bound as parameters, never pasted into SQL.
"""

from dataclasses import dataclass, field
from typing import Any

from synth.errors import SynthError
from synth.kg.graph import KnowledgeGraph
from synth.kg.snapshot import load_kg
from synth.schemas import DatasetVersion, Trajectory
from synth.settings import Settings
from synth.store.arrow_schema import from_row
from synth.store.catalog import Catalog
from synth.store.query import sandbox
from synth.store.reader import shard_glob

PAGE_SIZE = 50
ITEM_COLUMNS = ["id", "question", "answer", "hops", "difficulty", "recipe"]


@dataclass(frozen=True)
class ItemFilter:
    """What the items table is narrowed to; every field optional."""

    text: str = ""
    """Case-insensitive substring of the question or the answer."""
    hops: int | None = None
    difficulty: str = ""

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
        if self.difficulty:
            clauses.append("difficulty = ?")
            parameters.append(self.difficulty)
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


class StoreView:
    """Read-only access to one data root for the pages."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._graphs: dict[tuple[str | None, str], KnowledgeGraph | None] = {}

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

    def versions(self, name: str | None = None) -> list[DatasetVersion]:
        with Catalog.open(self.settings, read_only=True) as catalog:
            return catalog.versions(name)

    def version(self, ref: str) -> DatasetVersion:
        """The version `ref` names (NAME@N or NAME for the newest); NotFoundError otherwise."""
        with Catalog.open(self.settings, read_only=True) as catalog:
            return catalog.resolve(ref)

    def _query(self, version: DatasetVersion, table: str, sql: str, parameters: list[Any]) -> list[dict[str, Any]]:
        """`sql` with `{parts}` standing for the version's parts of `table`."""
        import duckdb

        parts = str(shard_glob(self.settings, version, table)).replace("'", "''")
        connection = duckdb.connect(":memory:")
        try:
            sandbox(connection, self.settings.datasets_dir)
            cursor = connection.execute(sql.format(parts=f"read_parquet('{parts}')"), parameters)
            names = [column[0] for column in cursor.description or []]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        finally:
            connection.close()

    def items(self, version: DatasetVersion, where: ItemFilter, number: int, size: int = PAGE_SIZE) -> Page:
        """Page `number` (from 1) of the version's items that match `where`, in stored order."""
        clause, parameters = where.sql()
        total = self._query(version, "items", "select count(*) as n from {parts}" + clause, parameters)[0]["n"]
        number = max(1, min(number, max(1, -(-total // size))))
        columns = ", ".join(ITEM_COLUMNS)
        rows = self._query(
            version,
            "items",
            f"select {columns} from {{parts}}{clause} limit ? offset ?",
            [*parameters, size, (number - 1) * size],
        )
        facets = {
            column: [
                (row["value"], row["n"])
                for row in self._query(
                    version,
                    "items",
                    f"select {column} as value, count(*) as n from {{parts}} group by 1 order by 1",
                    [],
                )
            ]
            for column in ("hops", "difficulty")
        }
        return Page(rows, total, number, size, facets)

    def labels_by_hops(self, version: DatasetVersion) -> dict[int, dict[str, int]]:
        """Hop count -> difficulty label -> items: the mix a version's chart draws."""
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

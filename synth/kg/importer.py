"""`synth kg import`: triples (+ optional entity and relation tables) into a DuckDB snapshot file.

Every input line is accounted for: imported, a duplicate, or a problem reported with its file and
line number and counted by reason. A triples file with no valid line is an error. Relations
without a row in the relation table get phrases read from their ids (marked `auto`).
"""

import json
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from synth import duckdb_files
from synth.errors import ConfigError
from synth.hashing import content_hash
from synth.kg.phrases import auto_phrases, humanize
from synth.kg.readers import ENTITIES, RELATIONS, TRIPLES, Problem, parse_flag, read_rows
from synth.kg.store import SUFFIX, snapshot_path

VALUE_PREFIX = "value:"
"""Id prefix of a literal value node ("value:1981"); its name is the value itself."""
LITERAL_WORDS = frozenset({"tag", "tags", "rating", "ratings", "votes", "year", "date", "count", "score"})
"""Relation-id words that mark tails as values when the relation table does not say."""
NUMERIC_SHARE = 0.9
BATCH_ROWS = 200_000
"""Rows buffered in Python before they go to DuckDB, so memory stays flat on huge files."""
SHOWN_PROBLEMS = 10
MATCH_SHARE = 0.5
"""An entity table whose ids match fewer than this share of its rows and of the triples' nodes is
keyed by something else: it is refused, not used to rename the few nodes it happens to match."""


@dataclass
class ImportSource:
    triples: Path
    entities: Path | None = None
    relations: Path | None = None
    format: str = "auto"
    """auto (from the file name: .tsv, .csv, .jsonl, else sniffed), tsv, csv, jsonl or sniff."""
    delimiter: str | None = None
    columns: tuple[str, ...] | None = None
    """Order of the triple fields in files without a header, e.g. ("head", "tail", "relation")."""
    entities_join: str = "id"
    """Which entity-table column holds the triples' node ids: `id`, or `name` where the triples name
    their nodes (MetaQA-style files) and the table's own ids are something else."""

    @classmethod
    def from_folder(cls, folder: Path, **options) -> "ImportSource":
        """A folder in synth's own layout (triples.tsv[.gz], entities.tsv[.gz], relations.tsv[.gz])."""

        def find(stem: str) -> Path | None:
            return next((folder / name for name in (f"{stem}.tsv", f"{stem}.tsv.gz") if (folder / name).exists()), None)

        triples = find("triples")
        if triples is None:
            raise ConfigError(f"{folder} has no triples.tsv or triples.tsv.gz; pass --triples FILE instead")
        return cls(triples=triples, entities=find("entities"), relations=find("relations"), **options)


@dataclass
class ImportReport:
    name: str
    snapshot_id: str = ""
    path: str = ""
    lines: Counter = field(default_factory=Counter)
    """Rows read per kind: triples, entities, relations."""
    problems: Counter = field(default_factory=Counter)
    """(kind, reason) -> count."""
    examples: list[Problem] = field(default_factory=list)
    triples: int = 0
    duplicate_triples: int = 0
    entities: int = 0
    unnamed_entities: int = 0
    """Nodes of a triple without an entity row; they are named by their id."""
    relations: int = 0
    auto_phrased_relations: int = 0
    literal_relations: list[str] = field(default_factory=list)
    """Relations whose tails are values (years, ratings, tags): cue values, never walked through."""
    seconds: float = 0.0

    def as_dict(self) -> dict:
        return {
            "name": self.name,
            "snapshot_id": self.snapshot_id,
            "path": self.path,
            "triples": self.triples,
            "duplicate_triples": self.duplicate_triples,
            "entities": self.entities,
            "unnamed_entities": self.unnamed_entities,
            "relations": self.relations,
            "auto_phrased_relations": self.auto_phrased_relations,
            "literal_relations": self.literal_relations,
            "lines_read": dict(self.lines),
            "problems": {f"{kind}/{reason}": count for (kind, reason), count in sorted(self.problems.items())},
            "problem_examples": [
                {"file": p.file, "line": p.line, "reason": p.reason, "text": p.text} for p in self.examples
            ],
            "seconds": round(self.seconds, 2),
        }


def import_graph(name: str, source: ImportSource, kg_dir: Path, replace: bool = False, log=print) -> ImportReport:
    """Read `source` and write the snapshot `name`; returns what was imported and what was not."""
    _check_name(name)
    target = snapshot_path(kg_dir, name)
    if target.exists() and not replace:
        raise ConfigError(
            f"a knowledge graph named {name!r} is already imported ({target}); pass --replace to overwrite it"
        )
    kg_dir.mkdir(parents=True, exist_ok=True)
    staging = kg_dir / f".{name}.{os.getpid()}{SUFFIX}.partial"
    staging.unlink(missing_ok=True)
    report, started = ImportReport(name=name), time.perf_counter()
    try:
        with duckdb_files.connect(staging) as connection:
            _create_tables(connection)
            _load_triples(connection, source, report, log)
            if source.entities is not None:
                _load_table(connection, "entities", source.entities, ENTITIES, source, report)
            if source.relations is not None:
                _load_table(connection, "relations", source.relations, RELATIONS, source, report)
            _finish(connection, name, source, report)
        report.seconds = time.perf_counter() - started
        staging.replace(target)
    finally:
        staging.unlink(missing_ok=True)
    report.path = str(target)
    return report


def _check_entity_keys(connection, source: ImportSource) -> None:
    """Key the entity table by the column the triples use (`entities_join`), and refuse a table
    whose keys match too few nodes to be the triples' ids."""
    if source.entities_join not in ("id", "name"):
        raise ConfigError(f"--entities-join must be id or name, not {source.entities_join!r}")
    if source.entities_join == "name":  # the triples name their nodes: the name is the key, the id is dropped
        connection.execute("update raw_entities set id = name")
    rows, matched, nodes = connection.execute(
        "with nodes as (select head as id from triples union select tail from triples) "
        "select (select count(distinct id) from raw_entities), "
        "(select count(*) from (select distinct id from raw_entities) e semi join nodes using (id)), "
        "(select count(*) from nodes)"
    ).fetchone()
    if rows and matched < MATCH_SHARE * rows and matched < MATCH_SHARE * nodes:
        other = "name" if source.entities_join == "id" else "id"
        raise ConfigError(
            f"{source.entities}: only {matched:,} of its {rows:,} entity {source.entities_join}s match one of the "
            f"{nodes:,} nodes of {source.triples.name}, so it would rename a few nodes and leave the rest: pass "
            f"--entities-join {other} if the triples use the entities' {other}s, or leave the entity table out"
        )


def _is_literal(relation: str, flag: str | None, numeric_share: float) -> bool:
    """As the relation table says; otherwise by the id ("has_tags", "release_year") or by the tails
    (nine in ten are numbers)."""
    if flag is not None and str(flag).strip():
        return parse_flag(flag)
    return bool(set(humanize(relation).split()) & LITERAL_WORDS) or numeric_share >= NUMERIC_SHARE


def _check_name(name: str) -> None:
    if not name or not all(character.isalnum() or character in "-_." for character in name) or name.startswith("."):
        raise ConfigError(
            f"knowledge-graph name {name!r} must be letters, digits, '-', '_' or '.', e.g. wikidata-small"
        )


def _create_tables(connection) -> None:
    connection.execute("create table raw_triples (head varchar, relation varchar, tail varchar)")
    connection.execute(
        "create table raw_entities (id varchar, name varchar, description varchar, aliases varchar, line integer)"
    )
    connection.execute(
        "create table raw_relations (id varchar, forward varchar, inverse varchar, head_type varchar, tail_type "
        "varchar, "
        "literal varchar, head_role varchar, tail_role varchar, line integer)"
    )


def _note(report: ImportReport, kind: str, problem: Problem) -> None:
    report.problems[(kind, problem.reason)] += 1
    if len(report.examples) < SHOWN_PROBLEMS:
        report.examples.append(problem)


def _load_triples(connection, source: ImportSource, report: ImportReport, log) -> None:
    import pyarrow as pa

    columns = {"head": [], "relation": [], "tail": []}

    def flush() -> None:
        batch = pa.table({key: pa.array(values, type=pa.string()) for key, values in columns.items()})
        connection.from_arrow(batch).insert_into("raw_triples")
        for values in columns.values():
            values.clear()

    for result in read_rows(source.triples, TRIPLES, source.format, source.delimiter, source.columns):
        if isinstance(result, Problem):
            _note(report, "triples", result)
            continue
        _, row = result
        report.lines["triples"] += 1
        columns["head"].append(row["head"])
        columns["relation"].append(row["relation"])
        columns["tail"].append(row["tail"])
        if len(columns["head"]) >= BATCH_ROWS:
            flush()
            log(f"  {report.lines['triples']:,} triples read ...")
    flush()
    if report.lines["triples"] == 0:
        bad = sum(count for (kind, _), count in report.problems.items() if kind == "triples")
        first = report.examples[0] if report.examples else None
        hint = f"; line {first.line}: {first.reason}: {first.text!r}" if first else ""
        raise ConfigError(
            f"{source.triples}: no valid triple in {bad} non-blank lines{hint}; "
            "expected head, relation, tail per line (set --format, --delimiter or --columns to match the file)"
        )


def _load_table(connection, table: str, path: Path, layout, source: ImportSource, report: ImportReport) -> None:
    import pyarrow as pa

    fields = list(layout.fields)
    rows: dict[str, list] = {name: [] for name in fields + ["line"]}
    for result in read_rows(path, layout, source.format if source.format == "jsonl" else "auto", source.delimiter):
        if isinstance(result, Problem):
            _note(report, table, result)
            continue
        number, row = result
        report.lines[table] += 1
        for name in fields:
            rows[name].append(row.get(name) or None)
        rows["line"].append(number)
    batch = pa.table(
        {name: pa.array(values, type=pa.int32() if name == "line" else pa.string()) for name, values in rows.items()}
    )
    connection.from_arrow(batch).insert_into(f"raw_{table}")


def _finish(connection, name: str, source: ImportSource, report: ImportReport) -> None:
    given = {
        row[0]: row[1:]
        for row in connection.execute(
            "select id, forward, inverse, head_type, tail_type, literal, head_role, tail_role from "
            "(select *, row_number() over (partition by id order by line) as n from raw_relations) where n = 1"
        ).fetchall()
    }
    # Every relation with the share of its tails that are numbers, in one pass over the triples.
    numeric_shares = dict(
        connection.execute(
            "select relation, avg((try_cast(tail as double) is not null)::double) from raw_triples group by "
            "relation order by relation"
        ).fetchall()
    )
    used = list(numeric_shares)
    literal = {
        relation
        for relation in used
        if _is_literal(relation, given.get(relation, (None,) * 7)[4], numeric_shares[relation])
    }
    report.literal_relations = sorted(literal)
    # Literal tails (years, ratings, tags) are values, not entities: their own ids, so the year 1981
    # is never the film titled "1981".
    connection.execute(
        "create table triples as select distinct head, relation, "
        "case when relation in (select unnest(?::varchar[])) then ? || tail else tail end as tail from raw_triples "
        "order by all",
        [sorted(literal), VALUE_PREFIX],
    )
    report.triples = connection.execute("select count(*) from triples").fetchone()[0]
    report.duplicate_triples = report.lines["triples"] - report.triples

    if source.entities is not None:
        _check_entity_keys(connection, source)
    # Entities: the first row for an id wins; later ones are reported as duplicates.
    duplicates = connection.execute(
        "select id, line from (select id, line, row_number() over (partition by id order by line) as n from "
        "raw_entities) where n > 1"
    ).fetchall()
    for entity_id, line in duplicates:
        _note(report, "entities", Problem(str(source.entities), line, "duplicate_id", entity_id))
    connection.execute(
        "create table named as select id, name, coalesce(description, '') as description, coalesce(aliases, '') as "
        "aliases "
        "from (select *, row_number() over (partition by id order by line) as n from raw_entities) where n = 1"
    )
    report.entities = connection.execute("select count(*) from named").fetchone()[0]
    # Names are optional: a node without a row is named by its id (a value by itself), and counted.
    connection.execute(
        "create table entities as select * from named union all "
        "select id, case when starts_with(id, ?) then id[length(?) + 1:] else id end, '', '' from "
        "(select head as id from triples union select tail from triples) nodes anti join named using (id) order by id",
        [VALUE_PREFIX, VALUE_PREFIX],
    )
    report.unnamed_entities = connection.execute(
        "select count(*) from entities anti join named using (id) where not starts_with(id, ?)", [VALUE_PREFIX]
    ).fetchone()[0]
    connection.execute("drop table named")

    # Relations: phrases from the table where given, read from the id otherwise.
    relation_rows = []
    for relation in used:
        forward, inverse, head_type, tail_type, _, head_role, tail_role = given.get(relation, (None,) * 7)
        auto = auto_phrases(relation)
        source_kind = "table" if forward and inverse else ("partial" if forward or inverse else "auto")
        report.auto_phrased_relations += source_kind != "table"
        relation_rows.append(
            (
                relation,
                forward or auto.forward,
                inverse or ("" if forward else auto.inverse),
                head_type or "",
                tail_type or "",
                source_kind,
                relation in literal,
                head_role if head_role is not None else ("" if forward else auto.head_role),
                tail_role if tail_role is not None else ("" if forward else auto.tail_role),
            )
        )
    connection.execute(
        "create table relations (id varchar primary key, forward varchar not null, inverse varchar not null, "
        "head_type varchar, tail_type varchar, phrase_source varchar, literal boolean, head_role varchar, tail_role "
        "varchar)"
    )
    connection.executemany("insert into relations values (?, ?, ?, ?, ?, ?, ?, ?, ?)", relation_rows)
    report.relations = len(relation_rows)
    for table in ("raw_triples", "raw_entities", "raw_relations"):
        connection.execute(f"drop table {table}")

    # The snapshot id is a hash of the content, independent of line order.
    digest = connection.execute(
        "select (select bit_xor(hash(head, relation, tail)) from triples), "
        "(select bit_xor(hash(id, name, description)) from entities), "
        "(select bit_xor(hash(id, forward, inverse)) from relations)"
    ).fetchone()

    report.snapshot_id = f"{name}-{content_hash([str(part) for part in digest], length=16)}"
    counts = {
        "triples": report.triples,
        "entities": report.entities,
        "relations": report.relations,
        "duplicate_triples": report.duplicate_triples,
        "unnamed_entities": report.unnamed_entities,
        "auto_phrased_relations": report.auto_phrased_relations,
        "literal_relations": report.literal_relations,
        "problems": {f"{kind}/{reason}": count for (kind, reason), count in report.problems.items()},
    }
    sources = {
        "triples": str(source.triples),
        "entities": str(source.entities) if source.entities else None,
        "relations": str(source.relations) if source.relations else None,
    }
    connection.execute(
        "create table snapshot (name varchar, snapshot_id varchar, imported_at timestamptz, sources varchar, counts "
        "varchar)"
    )
    connection.execute(
        "insert into snapshot values (?, ?, ?, ?, ?)",
        [name, report.snapshot_id, datetime.now(UTC), json.dumps(sources), json.dumps(counts)],
    )
    connection.execute("checkpoint")

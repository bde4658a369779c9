"""What changed between two versions, item by item: which ids one has and the other lacks, and
which shared items were relabeled (with the label-to-label counts). Items are matched by id, the
identity curation and relabeling keep; the work is a join DuckDB does over the two versions' parts,
and only counts and the first rows of each list come back."""

from dataclasses import dataclass, field
from typing import Any

from synth.browse.data import query_files
from synth.schemas import DatasetVersion
from synth.settings import Settings
from synth.store.reader import shard_glob

SHOWN = 100
"""Rows of each list a diff page shows; the SQL console has them all."""


@dataclass
class VersionDiff:
    old: DatasetVersion
    new: DatasetVersion
    counts: dict[str, int]
    """added, removed, relabeled, kept (shared and same label)."""
    transitions: dict[tuple[str, str], int] = field(default_factory=dict)
    """(old label, new label) -> shared items, for every pair with at least one."""
    added: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    relabeled: list[dict[str, Any]] = field(default_factory=list)

    def labels(self, order: list[str]) -> list[str]:
        """The labels the shared items have on either side, in `order` (unknown ones last)."""
        seen = {label for pair in self.transitions for label in pair}
        return [label for label in order if label in seen] + sorted(seen - set(order))

    def sql(self, kind: str) -> str:
        """A `synth sql` query that lists every row of `kind` (added, removed, relabeled)."""
        old = f"dataset = '{_quoted(self.old.name)}' and version = {self.old.version}"
        new = f"dataset = '{_quoted(self.new.name)}' and version = {self.new.version}"
        if kind == "relabeled":
            return (
                "select n.id, o.difficulty as old_label, n.difficulty as new_label, n.question "
                f"from (select * from items where {old}) o join (select * from items where {new}) n using (id) "
                "where o.difficulty <> n.difficulty"
            )
        first, second = (new, old) if kind == "added" else (old, new)
        return (
            f"select id, question, answer, hops, difficulty from items where {first} "
            f"and id not in (select id from items where {second})"
        )


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def diff_versions(settings: Settings, old: DatasetVersion, new: DatasetVersion, shown: int = SHOWN) -> VersionDiff:
    parts = {"old": shard_glob(settings, old, "items"), "new": shard_glob(settings, new, "items")}
    joined = "(select id, difficulty from {old}) o full outer join (select id, difficulty from {new}) n using (id)"
    pairs = query_files(
        settings,
        "select o.difficulty as old_label, n.difficulty as new_label, count(*) as n from " + joined + " group by all",
        [],
        **parts,
    )
    counts = {"added": 0, "removed": 0, "relabeled": 0, "kept": 0}
    transitions: dict[tuple[str, str], int] = {}
    for row in pairs:
        if row["old_label"] is None:
            counts["added"] += row["n"]
        elif row["new_label"] is None:
            counts["removed"] += row["n"]
        else:
            transitions[row["old_label"], row["new_label"]] = row["n"]
            counts["relabeled" if row["old_label"] != row["new_label"] else "kept"] += row["n"]
    columns = "a.id, a.question, a.answer, a.hops, a.difficulty"
    return VersionDiff(
        old,
        new,
        counts,
        transitions,
        added=query_files(
            settings,
            f"select {columns} from {{new}} a anti join {{old}} b on a.id = b.id order by a.id limit ?",
            [shown],
            **parts,
        ),
        removed=query_files(
            settings,
            f"select {columns} from {{old}} a anti join {{new}} b on a.id = b.id order by a.id limit ?",
            [shown],
            **parts,
        ),
        relabeled=query_files(
            settings,
            "select n.id, n.question, o.difficulty as old_label, n.difficulty as new_label from {old} o "
            "join {new} n using (id) where o.difficulty <> n.difficulty order by n.id limit ?",
            [shown],
            **parts,
        ),
    )

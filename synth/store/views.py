"""The views every query reads: one per table over the part files of every whole published version
(and one per eval and audit table over the finished evals and audits), written once here for both places they live: the
catalog file's stored views (relative paths, for plain DuckDB on the data root) and the in-memory
database a `synth sql` query runs in (absolute paths).

A damaged version (see synth.store.health) is left out with a one-line warning. A schema-only shard
per table is always included, so the views exist, with every column, before the first version is
published and when old versions lack newer columns.
"""

from pathlib import Path

from synth.schemas import DatasetVersion
from synth.settings import Settings
from synth.store.audits import AUDIT_TABLES, audit_files, audit_schema_shard
from synth.store.evals import EVAL_TABLES, eval_files, eval_schema_shard
from synth.store.health import healthy
from synth.store.shards import schema_shard
from synth.store.tables import TABLES


def view_files(settings: Settings, versions: list[DatasetVersion]) -> dict[str, list[Path]]:
    """View name -> the files it reads: the schema shard, then the whole versions' parts in order."""
    home = settings.home.absolute()
    whole = healthy(home, versions)
    files = {}
    for table in TABLES:
        files[table] = [schema_shard(settings, table)]
        files[table] += [part for version in whole for part in sorted((home / version.path / table).glob("*.parquet"))]
    for table in EVAL_TABLES:  # `synth eval` runs (synth.store.evals), in the same way
        files[table] = [eval_schema_shard(settings, table), *eval_files(settings, table)]
    for table in AUDIT_TABLES:  # `synth audit` verdicts (synth.store.audits)
        files[table] = [audit_schema_shard(settings, table), *audit_files(settings, table)]
    return files


REALIZED_DIFFICULTY = """
select i.dataset, i.version, i.id as item_id, i.hops, i.difficulty,
       l.answer_hit_step, l.mean_tool_calls as calls_to_correct, l.tokens_to_correct, l.closed_book_rate,
       t.answer_hit_step as teacher_answer_hit_step, t.calls_to_correct as teacher_calls_to_correct,
       t.tokens_to_correct as teacher_tokens_to_correct
from items i
left join labels l on l.dataset = i.dataset and l.version = i.version and l.item_id = i.id
left join (
    select dataset, version, item_id, median(answer_seen_at) as answer_hit_step,
           avg(num_tool_calls) as calls_to_correct,
           avg(usage.prompt_tokens + usage.completion_tokens) as tokens_to_correct
    from trajectories where role = 'teacher' and correct group by dataset, version, item_id
) t on t.dataset = i.dataset and t.version = i.version and t.item_id = i.id
"""
"""Per published item, how hard it was for the runs that solved it (synth.filters.realized): the
panel's figures from its label, the teacher's from its correct rollouts."""

DERIVED_VIEWS = {"realized_difficulty": REALIZED_DIFFICULTY}
"""Views over the table views, created after them."""


def create_views(connection, files: dict[str, list[Path]], relative_to: Path | None = None, temporary=False) -> None:
    """One view per entry of `files` on `connection` (paths relative to `relative_to` when given),
    then the DERIVED_VIEWS over them."""
    kind = "temporary " if temporary else ""
    for table, paths in files.items():
        names = [str(path.relative_to(relative_to)) if relative_to else str(path) for path in paths]
        file_list = ", ".join("'" + name.replace("'", "''") + "'" for name in names)
        connection.execute(
            f"create or replace {kind}view {table} as select * from read_parquet([{file_list}], union_by_name = true)"
        )
    if set(TABLES) <= set(files):
        for view, query in DERIVED_VIEWS.items():
            connection.execute(f"create or replace {kind}view {view} as {query}")

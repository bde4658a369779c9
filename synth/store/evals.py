"""Where eval runs live: Parquet files under the datasets folder, seen in SQL as two views.

Each run is a folder `<datasets>/.evals/<eval id>/` with `attempts.parquet` (every attempt) and
`run.parquet` (one row: the run and its summary), written run file last, so a folder without it is
an unfinished eval and is ignored. Like dataset versions, the files are the truth and the catalog
only holds views over them (`eval_runs`, `eval_attempts`), so a rebuilt catalog loses nothing,
`synth sql` can join attempts with the items they were made on, and an eval id is never stored
twice (the id names what was evaluated: the same eval again finds its folder).
"""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from synth.errors import ConfigError, NotFoundError
from synth.schemas import EvalAttempt, EvalRun
from synth.settings import Settings
from synth.store.arrow_schema import arrow_schema, from_row, to_row
from synth.store.bucket_records import share
from synth.store.shards import finished_folders, schema_shard, write_parquet_atomically

EVAL_TABLES = {"eval_runs": (EvalRun, "run.parquet"), "eval_attempts": (EvalAttempt, "attempts.parquet")}
"""View name -> (record type, file name in each eval's folder)."""


def evals_dir(settings: Settings) -> Path:
    return settings.datasets_dir / ".evals"


def eval_schema_shard(settings: Settings, table: str) -> Path:
    """An empty file with `table`'s schema, so its view exists before the first eval."""
    model, _ = EVAL_TABLES[table]
    return schema_shard(settings, table, arrow_schema(model))


def eval_files(settings: Settings, table: str) -> list[Path]:
    """The finished evals' files of `table`, oldest folder name first."""
    _, name = EVAL_TABLES[table]
    return [folder / name for folder in finished(settings)]


def finished(settings: Settings) -> list[Path]:
    return finished_folders(evals_dir(settings))


def save_eval(settings: Settings, run: EvalRun, attempts: list[EvalAttempt]) -> Path:
    folder = evals_dir(settings) / run.id
    folder.mkdir(parents=True, exist_ok=True)
    for table, records in (("eval_attempts", attempts), ("eval_runs", [run])):
        model, name = EVAL_TABLES[table]
        schema = arrow_schema(model)
        write_parquet_atomically(pa.Table.from_pylist([to_row(record) for record in records], schema), folder / name)
    share(settings, folder)  # where the data root is a bucket, every machine sees it
    return folder


def load_run(settings: Settings, eval_id: str) -> EvalRun:
    """The run whose id is `eval_id`, or the one run whose id starts with it (NotFoundError for an empty
    or unknown id, ConfigError for a prefix of several: never a guess)."""
    eval_id = eval_id.strip()
    if not eval_id:
        raise NotFoundError("no eval id given; `synth evals list` shows them")
    folders = finished(settings)
    matches = [folder for folder in folders if folder.name == eval_id] or [
        folder for folder in folders if folder.name.startswith(eval_id)
    ]
    if not matches:
        raise NotFoundError(f"no eval {eval_id!r}; `synth evals list` shows them")
    if len(matches) > 1:
        shown = ", ".join(folder.name for folder in matches[:5]) + (", ..." if len(matches) > 5 else "")
        raise ConfigError(f"{eval_id!r} starts {len(matches)} eval ids ({shown}); give more of the id")
    return _read_run(matches[0])


def list_runs(settings: Settings) -> list[EvalRun]:
    """Every finished eval, newest first."""
    return sorted((_read_run(folder) for folder in finished(settings)), key=lambda run: run.created_at, reverse=True)


def pass_rates_sql(settings: Settings, eval_id: str) -> str:
    """DuckDB SQL giving, per item the eval tried, `item_id` and `pass_rate` (the mean `correct` of its
    attempts), over the eval's attempts file: selections read it without loading attempts into Python."""
    path = str(evals_dir(settings) / eval_id / "attempts.parquet").replace("'", "''")
    return (
        "select item_id, avg(case when correct then 1.0 else 0.0 end) as pass_rate "
        f"from read_parquet('{path}') group by item_id"
    )


def load_attempts(settings: Settings, eval_id: str) -> list[EvalAttempt]:
    path = evals_dir(settings) / eval_id / "attempts.parquet"
    return [from_row(EvalAttempt, row) for row in pq.read_table(path).to_pylist()]


def _read_run(folder: Path) -> EvalRun:
    return from_row(EvalRun, pq.read_table(folder / "run.parquet").to_pylist()[0])

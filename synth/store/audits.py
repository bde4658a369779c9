"""Where audits live: beside the evals, Parquet files seen in SQL as two views (`audits`,
`audit_ratings`), and the samples their sheets were drawn from.

A sample is `<datasets>/.audits/samples/<sample id>.json` (which items, under which sheet ids, drawn
with which seed from which version), written when the sheets are. An audit is a folder
`<datasets>/.audits/<audit id>/` with `ratings.parquet` and `run.parquet` (one row, written last, so
a folder without it is unfinished and ignored). As with evals, the files are the truth and the
catalog holds only views, and the audit id names its content, so the same sheet imported twice is
stored once.
"""

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from synth.errors import NotFoundError
from synth.schemas import AuditRating, AuditRun, AuditSample
from synth.settings import Settings
from synth.store.arrow_schema import arrow_schema, from_row, to_row
from synth.store.bucket_records import share
from synth.store.shards import finished_folders, schema_shard, write_parquet_atomically

AUDIT_TABLES = {"audits": (AuditRun, "run.parquet"), "audit_ratings": (AuditRating, "ratings.parquet")}
"""View name -> (record type, file name in each audit's folder)."""


def audits_dir(settings: Settings) -> Path:
    return settings.datasets_dir / ".audits"


def audit_schema_shard(settings: Settings, table: str) -> Path:
    """An empty file with `table`'s schema, so its view exists before the first audit."""
    model, _ = AUDIT_TABLES[table]
    return schema_shard(settings, table, arrow_schema(model))


def audit_files(settings: Settings, table: str) -> list[Path]:
    _, name = AUDIT_TABLES[table]
    return [folder / name for folder in _folders(settings)]


def save_sample(settings: Settings, sample: AuditSample) -> Path:
    path = audits_dir(settings) / "samples" / f"{sample.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(sample.model_dump_json(indent=1))
    temporary.replace(path)
    share(settings, path)
    return path


def load_samples(settings: Settings) -> dict[str, AuditSample]:
    """Every stored sample by id (a damaged sample file is skipped: its sheets then read as unknown)."""
    folder = audits_dir(settings) / "samples"
    found = {}
    for path in sorted(folder.glob("*.json")) if folder.exists() else []:
        try:
            sample = AuditSample.model_validate(json.loads(path.read_text()))
        except (ValueError, OSError):
            continue
        found[sample.id] = sample
    return found


def audit_stored(settings: Settings, audit_id: str) -> bool:
    return (audits_dir(settings) / audit_id / "run.parquet").exists()


def save_audit(settings: Settings, run: AuditRun, ratings: list[AuditRating]) -> Path:
    folder = audits_dir(settings) / run.id
    folder.mkdir(parents=True, exist_ok=True)
    for table, records in (("audit_ratings", ratings), ("audits", [run])):
        model, name = AUDIT_TABLES[table]
        schema = arrow_schema(model)
        write_parquet_atomically(pa.Table.from_pylist([to_row(record) for record in records], schema), folder / name)
    share(settings, folder)  # where the data root is a bucket, every machine sees it
    return folder


def all_audits(settings: Settings) -> list[AuditRun]:
    """Every stored audit, oldest first."""
    return sorted((_read(folder) for folder in _folders(settings)), key=lambda run: run.created_at)


def version_audits(settings: Settings, dataset: str, version: int) -> list[AuditRun]:
    """The audits of one version, oldest first."""
    return [run for run in all_audits(settings) if run.dataset == dataset and run.version == version]


def load_ratings(settings: Settings, audit_id: str) -> list[AuditRating]:
    path = audits_dir(settings) / audit_id / AUDIT_TABLES["audit_ratings"][1]
    if not path.exists():
        raise NotFoundError(f"no audit {audit_id!r}; `synth audit list NAME@V` shows them")
    return [from_row(AuditRating, row) for row in pq.read_table(path).to_pylist()]


def item_ratings(settings: Settings, dataset: str, version: int, item_id: str) -> list[tuple[AuditRun, AuditRating]]:
    """Every stored rating of one item, with the audit it belongs to."""
    return [
        (run, rating)
        for run in version_audits(settings, dataset, version)
        for rating in load_ratings(settings, run.id)
        if rating.item_id == item_id
    ]


def _folders(settings: Settings) -> list[Path]:
    return finished_folders(audits_dir(settings))


def _read(folder: Path) -> AuditRun:
    return from_row(AuditRun, pq.read_table(folder / "run.parquet").to_pylist()[0])

"""Turning a reader's verdicts into a stored audit: every id checked against the version's samples
first, so a sheet for another version or with an unknown id stores nothing."""

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from synth.audit.sample import read_items
from synth.audit.sheets import SheetRow, read_sheet
from synth.audit.summary import summarize
from synth.errors import InputFileError
from synth.hashing import content_hash
from synth.schemas import AuditRating, AuditRun, AuditSample, DatasetVersion
from synth.settings import Settings
from synth.store.audits import audit_stored, load_ratings, load_samples, save_audit, version_audits
from synth.store.catalog import Catalog


@dataclass
class StoredAudit:
    run: AuditRun
    ratings: list[AuditRating]
    stored: bool
    """False when this very audit was stored before (nothing is stored twice)."""


def sample_of(settings: Settings, version: DatasetVersion, rows: list[SheetRow], source: str) -> AuditSample:
    """The one stored sample of `version` every row's id belongs to; one line naming the first id that
    belongs to another version's sample, to no sample, or to a second sample."""
    samples = load_samples(settings)
    owners = {entry.sheet_id: sample for sample in samples.values() for entry in sample.items}
    found: AuditSample | None = None
    for row in rows:
        owner = owners.get(row.sheet_id)
        if owner is None:
            raise InputFileError(
                f"{source} row {row.number}: id {row.sheet_id} is on no sheet `synth audit sample` wrote here; "
                "import the sheet it drew (ids are kept as written)"
            )
        if (owner.dataset, owner.version) != (version.name, version.version):
            raise InputFileError(
                f"{source} row {row.number}: id {row.sheet_id} is from a sheet of {owner.ref}, not {version.ref}; "
                f"import it as: synth audit import {owner.ref} {source}"
            )
        if found is not None and owner.id != found.id:
            raise InputFileError(
                f"{source} row {row.number}: id {row.sheet_id} is from sample {owner.id}, the rows before from "
                f"{found.id}; import each sample's sheet on its own"
            )
        found = owner
    assert found is not None
    return found


def store_audit(
    settings: Settings,
    version: DatasetVersion,
    sample: AuditSample,
    rows: list[SheetRow],
    reader_kind: str,
    reader: str,
    source: str,
) -> StoredAudit:
    """The audit of these rows, stored once (its id names its content) and the catalog's views refreshed."""
    wanted = {entry.sheet_id: entry.item_id for entry in sample.items}
    items = {item.id: item for item in read_items(settings, version) if item.id in set(wanted.values())}
    verdicts = [
        {
            "sheet": row.sheet_id,
            "rating": row.rating,
            "right": row.right,
            "only": row.only,
            "answers": row.reader_answers,
            "other": row.other_answers,
            "note": row.note,
        }
        for row in rows
    ]
    audit_id = content_hash({"sample": sample.id, "reader": [reader_kind, reader], "verdicts": verdicts}, length=12)
    if audit_stored(settings, audit_id):
        run = next(run for run in version_audits(settings, version.name, version.version) if run.id == audit_id)
        return StoredAudit(run, load_ratings(settings, audit_id), stored=False)
    ratings = []
    for row in rows:
        item = items.get(wanted[row.sheet_id])
        ratings.append(
            AuditRating(
                audit_id=audit_id,
                sheet_id=row.sheet_id,
                item_id=wanted[row.sheet_id],
                dataset=version.name,
                version=version.version,
                rating=row.rating,  # pyright: ignore[reportArgumentType]
                answer_right=row.right,
                only_answer=row.only,
                reader_answers=row.reader_answers,
                other_answers=row.other_answers,
                note=row.note,
                style=item.metadata.get("style") if item is not None else None,
                hops=item.hops if item is not None else None,
                world_answers=(item.metadata.get("world") or {}).get("answers") if item is not None else None,
            )
        )
    summary = summarize(ratings)
    overall = summary["all"]
    run = AuditRun(
        id=audit_id,
        created_at=datetime.now(UTC),
        dataset=version.name,
        version=version.version,
        sample_id=sample.id,
        seed=sample.seed,
        reader_kind=reader_kind,  # pyright: ignore[reportArgumentType]
        reader=reader,
        items=len(ratings),
        good=overall["good"],
        ok=overall["ok"],
        bad=overall["bad"],
        answer_right=overall["right"]["hits"],
        answer_right_of=overall["right"]["of"],
        only_answer=overall["only"]["hits"],
        only_answer_of=overall["only"]["of"],
        summary=summary,
        source=source,
    )
    save_audit(settings, run, ratings)
    with Catalog.open(settings) as catalog:
        catalog.refresh_views()
    return StoredAudit(run, ratings, stored=True)


def import_sheet(settings: Settings, ref: str, path: Path, reader: str) -> StoredAudit:
    """A person's filled sheet for version `ref`, checked whole, then stored."""
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref)
    rows = read_sheet(path)
    sample = sample_of(settings, version, rows, str(path))
    return store_audit(settings, version, sample, rows, "person", reader, path.name)

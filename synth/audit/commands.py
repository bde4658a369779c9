"""`synth audit sample` and `synth audit judge` end to end (import is synth.audit.record)."""

import asyncio
from dataclasses import dataclass
from pathlib import Path

from synth.audit.judge import judge_sample
from synth.audit.record import StoredAudit, store_audit
from synth.audit.reveal import reveals
from synth.audit.sample import draw_sample
from synth.audit.sheets import write_sheets
from synth.browse.data import StoreView
from synth.llm.base import LLMBackend
from synth.llm.models import ModelSpec
from synth.llm.session import LLMSession
from synth.schemas import AuditSample, DatasetVersion
from synth.settings import Settings
from synth.store.audits import save_sample
from synth.store.catalog import Catalog


@dataclass(frozen=True)
class SampleRequest:
    ref: str
    n: int = 30
    seed: int = 0
    style: str | None = None
    min_hops: int | None = None
    max_hops: int | None = None


@dataclass
class WrittenSample:
    sample: AuditSample
    sheets: list[Path]


def _drawn(settings: Settings, request: SampleRequest) -> tuple[DatasetVersion, AuditSample, dict, dict]:
    """(version, the sample drawn and stored, its items by id, what revealing shows of each)."""
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(request.ref)
    sample, items = draw_sample(
        settings, version, request.n, request.seed, request.style, request.min_hops, request.max_hops
    )
    save_sample(settings, sample)
    return version, sample, items, reveals(StoreView(settings), version, list(items.values()))


def write_sample(settings: Settings, request: SampleRequest, out: Path | None = None) -> WrittenSample:
    """Draw the sample, store it, and write its sheets into `out` (default ./audit-NAME-V-SAMPLE)."""
    _, sample, items, shown = _drawn(settings, request)
    folder = out if out is not None else Path(f"audit-{sample.dataset}-{sample.version}-{sample.id}")
    return WrittenSample(sample, write_sheets(folder, sample, items, shown))


def judge(
    settings: Settings,
    request: SampleRequest,
    model: str,
    models: dict[str, ModelSpec],
    log=print,
    backends: dict[str, LLMBackend] | None = None,
) -> tuple[StoredAudit, dict]:
    """The declared `model` reads the sample `request` draws (stored like one a person reads), blind
    then revealed; (the stored audit, the model calls' ledger summary)."""
    version, sample, items, shown = _drawn(settings, request)
    log(f"audit judge: {model} reads {len(sample.items)} items of {version.ref} (sample {sample.id})")

    async def read() -> tuple[list, dict]:
        session = LLMSession(settings, models, roles={}, log=log, backends=backends)
        try:
            client = session.client(model)
            rows = await judge_sample(client, sample, items, shown)
            return rows, {**session.ledger.summary(), "model_id": client.model_id}
        finally:
            await session.aclose()

    rows, calls = asyncio.run(read())
    stored = store_audit(settings, version, sample, rows, "model", model, calls["model_id"])
    return stored, calls

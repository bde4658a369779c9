"""Records of `synth audit`: a reader's judgement of a sample of a version's items (one row per
rated item, one per audit). A reader is a person or a served model; their verdicts are kept apart."""

from datetime import datetime
from typing import Literal

from pydantic import Field

from synth.schemas.base import JsonDict, NonBlank, Record

Rating = Literal["good", "ok", "bad"]
"""good: one clear real-world answer, reads as a person would write it; ok: readable and probably
unique, but awkward or borderline; bad: several real answers, a wrong or stale fact, nonsense, wrong
type or unreadable (docs/audit.md, the rubric)."""
ReaderKind = Literal["person", "model"]


class AuditRating(Record):
    """One reader's verdict on one item of an audit sample."""

    audit_id: NonBlank
    sheet_id: NonBlank
    """The item's id on the blind sheet (says nothing of the item)."""
    item_id: NonBlank
    dataset: NonBlank
    version: int = Field(ge=1)
    rating: Rating
    answer_right: bool | None = None
    """The stored answer is correct in the real world, the facts it rests on included (None: not said)."""
    only_answer: bool | None = None
    """No other real-world entity satisfies the question, in the reader's judgement (None: not said)."""
    reader_answers: list[str] = Field(default_factory=list)
    """What the reader named before seeing the stored answer."""
    other_answers: list[str] = Field(default_factory=list)
    """Other real-world answers the reader found."""
    note: str = ""
    style: str | None = None
    hops: int | None = None
    """The item's hops (as the version labels them), for breakdowns."""
    world_answers: float | None = None
    """The construction's estimate of the item's answers in the world (None for items built without one):
    what the reader's `only_answer` calibrates."""


class AuditRun(Record):
    """One audit of a version: who read which sample, and the counts (`summary` has them per style,
    with Wilson 95% intervals)."""

    id: NonBlank
    created_at: datetime
    dataset: NonBlank
    version: int = Field(ge=1)
    sample_id: NonBlank
    seed: int
    reader_kind: ReaderKind
    reader: NonBlank
    """Who read: a person's name (or `reader`), or the declared model's name."""
    items: int = Field(ge=0)
    good: int = Field(ge=0)
    ok: int = Field(ge=0)
    bad: int = Field(ge=0)
    answer_right: int = Field(ge=0)
    """Items whose stored answer the reader found right (of `answer_right_of`, those where the reader said)."""
    answer_right_of: int = Field(ge=0)
    only_answer: int = Field(ge=0)
    """Items the reader found to have no other real-world answer (of `only_answer_of`)."""
    only_answer_of: int = Field(ge=0)
    summary: JsonDict = Field(default_factory=dict)
    source: str = ""
    """The sheet file imported (its name), or the judge's model id."""


class SampledItem(Record):
    sheet_id: str
    item_id: str


class AuditSample(Record):
    """Which items of `dataset@version` a sheet shows, in the order shown."""

    id: str
    dataset: str
    version: int = Field(ge=1)
    seed: int
    style: str | None = None
    min_hops: int | None = None
    max_hops: int | None = None
    created_at: datetime
    items: list[SampledItem]

    @property
    def ref(self) -> str:
        return f"{self.dataset}@{self.version}"

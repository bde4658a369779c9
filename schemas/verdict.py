"""What a filter decided about an item, and why."""

from pydantic import model_validator

from synth.schemas.base import JsonDict, NonBlank, Record, SnakeCase


class FilterVerdict(Record):
    """Keep, or drop with a snake_case reason that tests and `synth sql` can group by."""

    item_id: NonBlank
    filter: SnakeCase
    kept: bool
    reason: SnakeCase | None = None
    score: float | None = None
    details: JsonDict = {}

    @model_validator(mode="after")
    def _dropped_needs_reason(self) -> "FilterVerdict":
        if not self.kept and self.reason is None:
            raise ValueError("a dropped item needs a reason")
        return self

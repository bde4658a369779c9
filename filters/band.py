"""Difficulty band: keep items whose pooled search success rate lies in a band, e.g. 0 < s < 1
(SSP's proposer is rewarded for questions the solver finds hard but not impossible; RL on
items every rollout solves, or none does, gives no gradient under GRPO-style advantages).

Reads the difficulty labels the consensus stage made, so the success rate is the same figure
that set the label.
"""

from pydantic import Field, model_validator

from synth.config import FrozenConfig
from synth.filters.base import CheckResult, Filter
from synth.filters.consensus import search_success
from synth.schemas import DifficultyLabel, Item


class BandConfig(FrozenConfig):
    low: float = Field(default=0.0, ge=0.0, le=1.0, description="Lower bound of the kept search success rate.")
    high: float = Field(default=1.0, ge=0.0, le=1.0, description="Upper bound of the kept search success rate.")
    inclusive: bool = Field(
        default=False, description="Keep rates equal to a bound (low <= s <= high); default low < s < high."
    )

    @model_validator(mode="after")
    def _ordered(self) -> "BandConfig":
        if self.low > self.high or (self.low == self.high and not self.inclusive):
            raise ValueError(
                f"band low={self.low} and high={self.high} keep nothing; use low < high (or inclusive=true)"
            )
        return self

    def below(self, rate: float) -> bool:
        return rate < self.low or (rate == self.low and not self.inclusive)

    def above(self, rate: float) -> bool:
        return rate > self.high or (rate == self.high and not self.inclusive)


class BandFilter(Filter):
    name = "band"

    def __init__(self, config: BandConfig, labels: dict[str, DifficultyLabel]):
        self.config, self.labels = config, labels

    def check(self, item: Item) -> CheckResult:
        label = self.labels.get(item.id)
        rate = search_success(label.pass_rates) if label else None
        if rate is None:
            return False, "no_search_attempts"
        details = {"success": round(rate, 4), "low": self.config.low, "high": self.config.high}
        if self.config.below(rate):
            return False, "too_hard", details
        if self.config.above(rate):
            return False, "too_easy", details
        return True, "in_band", details

"""The self-play curriculum: after each round, move the proposer's requested number of searches
toward the band where the solver succeeds sometimes but not always.

A deeper search (more hops to find, more facts to combine) makes questions harder, as in SSP and
WebSailor; the signal is the solver's pooled search success rate on the round's verified
questions. Too often solved: one more search next round. (Almost) never solved: one fewer. A round
whose questions never reached the solver carries no signal about difficulty, so the depth stays.
"""

from dataclasses import dataclass

from pydantic import Field, model_validator

from synth.config import FrozenConfig


class CurriculumConfig(FrozenConfig):
    start_searches: int = Field(default=2, ge=1, description="Searches the proposer is asked for in the first round.")
    min_searches: int = Field(default=2, ge=1, description="Fewest searches ever asked for.")
    max_searches: int = Field(default=6, ge=1, description="Most searches ever asked for.")
    deeper_above: float = Field(
        default=0.75,
        ge=0.0,
        le=1.0,
        description="Mean solver success above which the next round asks for one more search.",
    )
    shallower_below: float = Field(
        default=0.05, ge=0.0, le=1.0, description="Mean solver success below which the next round asks for one fewer."
    )

    @model_validator(mode="after")
    def _consistent(self) -> "CurriculumConfig":
        if not self.min_searches <= self.start_searches <= self.max_searches:
            raise ValueError(
                f"need min_searches <= start_searches <= max_searches, got {self.min_searches}, "
                f"{self.start_searches}, {self.max_searches}"
            )
        if self.shallower_below > self.deeper_above:
            raise ValueError(
                f"shallower_below ({self.shallower_below}) must not exceed deeper_above ({self.deeper_above})"
            )
        return self


@dataclass(frozen=True)
class DepthDecision:
    searches: int
    """Searches to ask for next round."""
    decision: str
    """deeper, shallower or keep."""
    reason: str


def next_searches(config: CurriculumConfig, searches: int, solved: float | None) -> DepthDecision:
    """`solved`: mean pooled search success over the round's verified questions (None: none reached the solver)."""
    if solved is None:
        return DepthDecision(searches, "keep", "no question reached the solver: no difficulty signal")
    if solved > config.deeper_above:
        if searches < config.max_searches:
            return DepthDecision(searches + 1, "deeper", f"solved {solved:.2f} > {config.deeper_above}: too easy")
        return DepthDecision(
            searches, "keep", f"solved {solved:.2f} > {config.deeper_above}, but already at max_searches"
        )
    if solved < config.shallower_below:
        if searches > config.min_searches:
            return DepthDecision(searches - 1, "shallower", f"solved {solved:.2f} < {config.shallower_below}: too hard")
        return DepthDecision(
            searches, "keep", f"solved {solved:.2f} < {config.shallower_below}, but already at min_searches"
        )
    return DepthDecision(
        searches, "keep", f"solved {solved:.2f} is in [{config.shallower_below}, {config.deeper_above}]"
    )

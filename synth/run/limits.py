"""What a run may spend and how much failure it tolerates: `--max-tokens`, `--max-cost`,
`--max-failure-rate`, or `budget:` and `failures:` in a flows.yaml entry.

Limits are not part of a run's identity: a run stopped by its budget resumes, with the same
folder and cache, when rerun with a larger one.
"""

from pydantic import Field

from synth.config import FrozenConfig
from synth.llm.accounting import Budget
from synth.llm.gate import FailurePolicy


class RunLimits(FrozenConfig):
    budget: Budget = Field(
        default_factory=Budget, description="Stop the run (resumable, unpublished) before it spends more."
    )
    failures: FailurePolicy = Field(
        default_factory=FailurePolicy, description="Stop the run when a stage's model calls fail this often."
    )

    def merged(
        self, max_tokens: int | None = None, max_cost_usd: float | None = None, max_failure_rate: float | None = None
    ) -> "RunLimits":
        """These limits with command-line values, where given, taking precedence."""
        given = {
            key: value
            for key, value in {"max_tokens": max_tokens, "max_cost_usd": max_cost_usd}.items()
            if value is not None
        }
        failures = self.failures if max_failure_rate is None else FailurePolicy(max_rate=max_failure_rate)
        return RunLimits(budget=Budget.model_validate({**self.budget.model_dump(), **given}), failures=failures)

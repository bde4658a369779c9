"""The failure gate: a stage whose model calls mostly failed is not saved, and the run stops.

A panel shard answered by a server that returns 500s would otherwise label every item
`unsolved`, and the version would carry those labels forever (later runs dedup against it). So
after each stage the calls it made are counted per model; when the share that failed for the
server's reasons (timeouts, refused connections, 5xx, garbage, the open circuit) passes
`max_rate`, the stage is discarded and the run stops with one line naming the model, the
endpoint, the dominant reason and how to resume. Answers that did arrive are in the response
cache, so the rerun sends only the calls that never got one.
"""

from collections import Counter

from pydantic import Field

from synth.config import FrozenConfig
from synth.errors import ModelFailureError
from synth.llm.accounting import Ledger
from synth.llm.types import is_model_failure


class FailurePolicy(FrozenConfig):
    max_rate: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="Largest share of one stage's model calls (per model) that may fail before the run stops "
        "unpublished.",
    )


def check_stage(stage: str, rows: list[dict], ledger: Ledger, policy: FailurePolicy) -> None:
    """Raise ModelFailureError if a model's calls in `rows` (`ledger.since(mark)` of one stage)
    failed above the policy's rate. Cache hits are not calls; budget refusals have their own stop."""
    calls: Counter = Counter()
    failed: dict[str, Counter] = {}
    for row in rows:
        model = row["model"]
        calls[model] += row["requests"] - row["cache_hits"]
        for reason, count in row["failures"].items():
            if is_model_failure(reason) and reason != "budget_exceeded":
                failed.setdefault(model, Counter())[reason] += count
    for model, reasons in sorted(failed.items()):
        total = sum(reasons.values())
        if calls[model] and total > policy.max_rate * calls[model]:
            reason, count = reasons.most_common(1)[0]
            example = _example(ledger, model, reason)
            where = f" at {example.endpoint}" if example is not None and example.endpoint else ""
            detail = f": {example.detail}" if example is not None and example.detail else ""
            raise ModelFailureError(
                f"stage {stage}: {total} of {calls[model]} calls to {model}{where} failed "
                f"(mostly {reason}, {count}x{detail[:300]}), above failures.max_rate={policy.max_rate:g}; "
                "nothing was published. Fix the model server and rerun the same command: finished stages "
                "and answered calls are reused (raise --max-failure-rate to accept more failures)"
            )


def _example(ledger: Ledger, model: str, reason: str):
    for (_, failed_model), failures in ledger.last_failures.items():
        if failed_model == model and reason in failures:
            return failures[reason]
    return None

"""Exact deduplication: one item per construction (item id) and per normalized question.

Near-duplicate removal (MinHash or embeddings) and dedup against earlier versions extend this.
"""

from typing import Literal

from synth.contract.matching import normalize_answer
from synth.filters.base import CheckResult, Filter
from synth.filters.checks import CheckConfig, CheckScope
from synth.schemas import Item


class DedupConfig(CheckConfig):
    kind: Literal["dedup"] = "dedup"
    summary = "One item per construction and per normalized question (also across earlier rounds)."

    def build(self, scope: CheckScope) -> "ExactDedupFilter":
        dedup = ExactDedupFilter()
        for item in scope.earlier_items:
            dedup.check(item)
        return dedup


class ExactDedupFilter(Filter):
    """Stateful across calls, so a run that filters batch after batch still deduplicates globally."""

    name = "dedup"

    def __init__(self):
        self.seen_ids: set[str] = set()
        self.seen_questions: dict[str, str] = {}

    def check(self, item: Item) -> CheckResult:
        if item.id in self.seen_ids:
            return False, "duplicate_construction"
        question = normalize_answer(item.question)
        if question in self.seen_questions:
            return False, "duplicate_question", {"duplicate_of": self.seen_questions[question]}
        self.seen_ids.add(item.id)
        self.seen_questions[question] = item.id
        return True

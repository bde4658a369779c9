"""A check written outside synth, as a user would add one: this file and one `register_check` call."""

from typing import Literal

from pydantic import Field

from synth.filters import register_check
from synth.filters.base import CheckResult, Filter
from synth.filters.checks import CheckConfig, CheckScope
from synth.schemas import Item


class WordBudgetFilter(Filter):
    name = "word_budget"

    def __init__(self, max_words: int):
        self.max_words = max_words

    def check(self, item: Item) -> CheckResult:
        words = len(item.question.split())
        return True if words <= self.max_words else (False, "over_word_budget", {"words": words})


@register_check
class WordBudgetConfig(CheckConfig):
    kind: Literal["word_budget"] = "word_budget"
    summary = "Questions of at most `max_words` words."
    max_words: int = Field(default=30, ge=1, description="Most words a question may have.")

    def build(self, scope: CheckScope) -> WordBudgetFilter:
        return WordBudgetFilter(self.max_words)

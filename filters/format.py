"""Format and length: the question is one well-formed question of sensible length; the answer is short.

A question ends with "?", or its last sentence is a request that ends with "." ("Name the film that
...", as trivia and benchmark questions often are, or "A film was directed by X. ... Name this
city." after sentences that build the description up).
"""

import re
from typing import Literal

from pydantic import Field

from synth.filters.base import CheckResult, Filter
from synth.filters.checks import CheckConfig, CheckScope
from synth.schemas import Item

_REQUEST = re.compile(r"(?:^|[.!]\s+)(?:Name|Identify|Give|State|List) .*\.$")
"""A request ending the text, opening it or a sentence ("J. R. R. Tolkien" may stand inside it)."""


class FormatConfig(CheckConfig):
    kind: Literal["format"] = "format"
    summary = "One well-formed question of sensible length; a short answer."
    min_question_words: int = Field(default=5, ge=1, description="Fewest words a question may have.")
    max_question_words: int = Field(default=80, ge=1, description="Most words a question may have.")
    max_answer_words: int = Field(default=12, ge=1, description="Most words an answer may have.")

    def build(self, scope: CheckScope) -> "FormatFilter":
        return FormatFilter(self)


class FormatFilter(Filter):
    name = "format"

    def __init__(self, config: FormatConfig = FormatConfig()):
        self.config = config

    def check(self, item: Item) -> CheckResult:
        words = len(item.question.split())
        if words < self.config.min_question_words:
            return False, "question_too_short", {"words": words}
        if words > self.config.max_question_words:
            return False, "question_too_long", {"words": words}
        question = item.question.rstrip()
        if not (question.endswith("?") or _REQUEST.search(question)):
            return False, "not_a_question"
        if item.question.count("?") > 1:
            return False, "several_questions"
        if len(item.answer.split()) > self.config.max_answer_words:
            return False, "answer_too_long", {"words": len(item.answer.split())}
        return True

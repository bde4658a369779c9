"""Leakage: the question must name neither the answer (or an alias) nor any hidden intermediate.

Matching is on normalized text with word boundaries, so "Paris" leaks in "born in Paris?" but not
in "Parisian". Intermediate names come from the item's construction path via `names`.
"""

import re
from typing import Callable

from synth.filters.base import CheckResult, Filter
from synth.matching import normalize_answer
from synth.schemas import Item


def mentions(text: str, name: str) -> bool:
    return _contains(normalize_answer(text), name)


def _contains(normalized_text: str, name: str) -> bool:
    needle = normalize_answer(name)
    return bool(needle) and needle in normalized_text and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", normalized_text) is not None


class LeakageFilter(Filter):
    name = "leakage"

    def __init__(self, names: Callable[[str], str]):
        self.names = names

    def check(self, item: Item) -> CheckResult:
        question = normalize_answer(item.question)  # once per item, not once per name
        for answer in item.answers:
            if _contains(question, answer):
                return False, "answer_in_question", {"leaked": answer}
        named = {entity for constraint in item.constraints for entity in constraint.named}
        hidden = {hop.head for hop in item.path} | {hop.tail for hop in item.path}
        hidden -= named | ({item.answer_entity_id} if item.answer_entity_id else set())
        for entity_id in sorted(hidden):
            name = self.names(entity_id)
            if _contains(question, name) and not any(mentions(self.names(anchor), name) for anchor in named):
                return False, "intermediate_in_question", {"leaked": name, "entity": entity_id}
        return True

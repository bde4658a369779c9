"""Leakage: a question may name neither the answer nor any hidden entity, not even inside another name.

Three checks, on normalized text with word boundaries (so "Paris" leaks in "born in Paris?" but not
in "Parisian"), with aliases counting as names:
- answer_in_question: the answer or an alias appears in the question;
- name_overlap: a named entity (a constraint's or a fact's anchor) contains, or is contained in, the
  name of the answer or of a hidden intermediate ("Newfoundland Time Zone" names the hidden
  "Newfoundland"; "Free jazz" names the answer "Jazz"); the detail records the overlapping words;
- intermediate_in_question: a hidden intermediate's name appears anywhere else in the question.
Construction already avoids such cues (synth.kg.names); this filter is the last line.
"""

from collections.abc import Callable
from typing import Literal

from synth.contract.matching import contains_name, normalized
from synth.filters.base import CheckResult, Filter
from synth.filters.checks import CheckConfig, CheckScope
from synth.kg.names import NameOverlap, sequences_of, shared_words
from synth.schemas import Item


def _as_list(names: Callable[[str], str | list[str]]) -> Callable[[str], list[str]]:
    def every_name(entity_id: str) -> list[str]:
        value = names(entity_id)
        return [value] if isinstance(value, str) else list(value)

    return every_name


class LeakageConfig(CheckConfig):
    kind: Literal["leakage"] = "leakage"
    summary = "The question names neither the answer nor a hidden entity."

    def build(self, scope: CheckScope) -> "LeakageFilter":
        return LeakageFilter(scope.names)


class LeakageFilter(Filter):
    name = "leakage"

    def __init__(self, names: Callable[[str], str | list[str]]):
        """`names(entity_id)`: the entity's name, or all its names (name and aliases)."""
        self.overlaps = NameOverlap(_as_list(names))

    def check(self, item: Item) -> CheckResult:
        question = normalized(item.question)  # once per item, not once per name
        for answer in item.answers:
            if contains_name(question, answer):
                return False, "answer_in_question", {"leaked": answer}
        named = list(dict.fromkeys(entity for constraint in item.constraints for entity in constraint.named))
        hidden = ({hop.head for hop in item.path} | {hop.tail for hop in item.path}) - set(named)
        answer = item.answer_entity_id
        hidden_names = {entity: list(self.overlaps.names(entity)) for entity in sorted(hidden)}
        if answer:
            hidden_names[answer] = list(dict.fromkeys([*self.overlaps.names(answer), *item.answers]))
        hidden_sequences = {entity: sequences_of(names) for entity, names in hidden_names.items()}
        for entity in named:
            for hidden_entity, names in hidden_names.items():
                shared = shared_words(self.overlaps.sequences(entity), hidden_sequences[hidden_entity])
                if shared is not None:
                    return (
                        False,
                        "name_overlap",
                        {
                            "named": self.overlaps.names(entity)[0],
                            "hidden": names[0],
                            "entity": hidden_entity,
                            "overlap": shared,
                        },
                    )
        for entity_id, names in hidden_names.items():
            if entity_id == answer:
                continue
            for name in names:
                if contains_name(question, name):
                    return False, "intermediate_in_question", {"leaked": name, "entity": entity_id}
        return True

"""Every question the template verbalizer writes, in every style and at every chain length, passes the
checks that would otherwise drop it (format) and the grammar lint: a phrasing a check rejects is a
test failure here, never a silent drop in a run's funnel."""

import pytest

from synth.filters.format import FormatFilter
from synth.filters.grammar_lint import lint
from synth.generators.kg_walk import WalkConfig
from synth.generators.multihop import MultihopGenerator
from synth.generators.reverse import ConstructConfig
from synth.kg.snapshot import load_snapshot
from synth.schemas import Item

ATTEMPTS = {2: 80, 3: 120, 4: 700, 5: 1000, 6: 250, 7: 250, 8: 250}
"""Candidates per length (each a fresh walk): long chains are mostly dead ends or rejected (on the raw
graph, 6 plain 4-hop items in 3,000 candidates and none of 5 hops; 2 obfuscated ones of 5: the
pipeline's long sets take a larger budget, `max_attempts_per_item`, and test_multihop reads them)."""


@pytest.fixture(scope="module")
def kg():
    return load_snapshot()


@pytest.mark.parametrize("style", ["plain", "obfuscated"])
@pytest.mark.parametrize("hops", [2, 3, 4, 5, 6, 7, 8])
def test_every_question_passes_the_format_check_and_the_lint(kg, style, hops):
    walkable = kg.without_relations(kg.literal_relations)
    check = FormatFilter()
    generator = MultihopGenerator(
        walkable,
        WalkConfig(),
        ConstructConfig(),
        seed=hops,
        style=style,
        max_words=check.config.max_question_words,
        min_words=check.config.min_question_words,
    )
    generator.kg = kg  # the pipeline walks the view and names from the full graph alike
    items = [item for item in (generator.attempt(hops) for _ in range(ATTEMPTS[hops])) if isinstance(item, Item)]
    assert items or hops >= 5, f"no {hops}-hop {style} item in {ATTEMPTS[hops]} candidates"
    for item in items:
        names = [
            kg.name(entity) for constraint in item.constraints for entity in (constraint.anchor, *constraint.named)
        ]
        assert check.check(item) is True, (check.check(item), item.question)
        assert lint(item.question, names) == [], (lint(item.question, names), item.question)

"""The quality report of a set of items: leaks, grammar lint, length, openings, type nouns, styles.

Printed by `synth datasets show`, stored in the version's summary under "quality", and printed by
`benchmarks/bench_phrasing.py` for 1,000 items per style, so a change to phrasing is measured.
Figures, not a gate: the leakage filter has already dropped what leaks.
"""

import re
import statistics
from collections import Counter
from collections.abc import Callable, Iterable

from synth.filters.grammar_lint import lint
from synth.filters.leakage import LeakageFilter
from synth.schemas import Item

LENGTH_TARGET = 25
"""Mean words per question the default phrasing stays under (MuSiQue: about 16 for 2-4 hops)."""
_OPENING = re.compile(r"^(?:In which|Name the|What is|Which|What|Who|Where|When|Name|In)\b")


def opening(question: str) -> str:
    match = _OPENING.match(question)
    return match.group(0) if match else question.split(" ", 1)[0]


def quality_report(items: Iterable[Item], names: Callable[[str], str | list[str]] | None = None) -> dict:
    """Figures over `items`; `names(entity_id)` (name or names) enables the leak re-check and masks
    entity names out of the lint."""
    items = list(items)
    if not items:
        return {"items": 0}
    leakage = LeakageFilter(names) if names is not None else None
    leaks, patterns, linted, typed, safe = Counter(), Counter(), 0, 0, 0
    words: dict[int, list[int]] = {}
    for item in items:
        if leakage is not None:
            verdict = leakage.check(item)
            if verdict is not True:
                leaks[verdict[1]] += 1
        named = (
            [_first(names(entity)) for constraint in item.constraints for entity in constraint.named] if names else []
        )
        found = lint(item.question, named)
        patterns.update(found)
        linted += bool(found)
        words.setdefault(item.hops, []).append(len(item.question.split()))
        nouns = item.metadata.get("type_nouns") or {}
        typed += nouns.get("typed", 0)
        safe += nouns.get("safe", 0)
    openings = Counter(opening(item.question) for item in items)
    every = [count for counts in words.values() for count in counts]
    return {
        "items": len(items),
        "leaks": dict(sorted(leaks.items())) if leakage is not None else "not checked (no graph names)",
        "lint_items": linted,
        "lint_share": round(linted / len(items), 4),
        "lint_patterns": dict(patterns.most_common()),
        "mean_words": round(statistics.mean(every), 1),
        "mean_words_target": LENGTH_TARGET,
        "mean_words_by_hops": {str(hops): round(statistics.mean(counts), 1) for hops, counts in sorted(words.items())},
        "openings": dict(openings.most_common()),
        "top_opening_share": round(openings.most_common(1)[0][1] / len(items), 3),
        "type_noun_coverage": round(typed / (typed + safe), 3) if typed + safe else None,
        "styles": dict(Counter(str(item.metadata.get("style", "unspecified")) for item in items).most_common()),
    }


def _first(value) -> str:
    return value if isinstance(value, str) else (list(value) or [""])[0]

"""The quality report of a set of items: leaks, grammar lint, length, clause length, openings, type
nouns, placeholder words ("something"), styles, effective hops against chain hops, and (with the
graph's world model) answers in a larger world, hub cues, cues that decide alone and appended cues
that leave at most two candidates (synth.kg.shortcuts).

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
from synth.kg.multiplicity import WorldModel, deciding_part, hub_cues
from synth.kg.shortcuts import effective_hops
from synth.kg.types import AnswerKind, EntityTypes
from synth.schemas import Item

LENGTH_TARGET = 25
"""Mean words per question the default phrasing stays under (MuSiQue: about 16 for 2-4 hops)."""
_OPENING = re.compile(r"^(?:In which|Name the|What is|Which|What|Who|Where|When|Name|In)\b")
_PLACEHOLDER = re.compile(r"\b(?:something|someone|this one)\b", re.IGNORECASE)
"""Words that stand where a type noun should ("something that ...", "a person founded this one")."""
_CLAUSE_BREAK = re.compile(r"[,.;:?!]|\b(?:that|who|whom|whose|which|where|and)\b", re.IGNORECASE)


def longest_clause(question: str) -> int:
    """Words in the question's longest clause: the stretch between punctuation, relative words and
    "and". A stack of relative clauses reads as one long noun phrase ("the capital of the place with
    the administrative subdivision ...") and shows up here."""
    return max(len(part.split()) for part in _CLAUSE_BREAK.split(question))


def opening(question: str) -> str:
    match = _OPENING.match(question)
    return match.group(0) if match else question.split(" ", 1)[0]


def quality_report(
    items: Iterable[Item], names: Callable[[str], str | list[str]] | None = None, world: WorldModel | None = None
) -> dict:
    """Figures over `items`; `names(entity_id)` (name or names) enables the leak re-check and masks
    entity names out of the lint; `world` re-checks every item against the graph for hub cues and
    parts that decide alone, and reads the larger world's answer estimates."""
    items = list(items)
    if not items:
        return {"items": 0}
    leakage = LeakageFilter(names) if names is not None else None
    leaks, patterns, linted, typed, safe = Counter(), Counter(), 0, 0, 0
    words: dict[int, list[int]] = {}
    for item in items:
        if leakage is not None:
            verdict = leakage.check(item)
            if isinstance(verdict, tuple):
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
    clauses = sorted(longest_clause(item.question) for item in items)
    figures = _world_figures(items, world) if world is not None else {}
    return {
        "items": len(items),
        "leaks": dict(sorted(leaks.items())) if leakage is not None else "not checked (no graph names)",
        "lint_items": linted,
        "lint_share": round(linted / len(items), 4),
        "lint_patterns": dict(patterns.most_common()),
        "mean_words": round(statistics.mean(every), 1),
        "mean_words_target": LENGTH_TARGET,
        "mean_words_by_hops": {str(hops): round(statistics.mean(counts), 1) for hops, counts in sorted(words.items())},
        "longest_clause_words": {
            "mean": round(statistics.mean(clauses), 1),
            "p90": clauses[int(0.9 * (len(clauses) - 1))],
            "max": clauses[-1],
        },
        "openings": dict(openings.most_common()),
        "top_opening_share": round(openings.most_common(1)[0][1] / len(items), 3),
        "type_noun_coverage": round(typed / (typed + safe), 3) if typed + safe else None,
        "styles": dict(Counter(str(item.metadata.get("style", "unspecified")) for item in items).most_common()),
        "something_share": round(sum(bool(_PLACEHOLDER.search(item.question)) for item in items) / len(items), 4),
        "effective_hops": _effective_hops(items),
        **figures,
    }


def _effective_hops(items: list[Item]) -> dict:
    """chain hops -> {effective hops: items}, as the items recorded them (graph items only)."""
    found: dict[str, Counter] = {}
    for item in items:
        chain = item.metadata.get("chain_hops")
        if chain is not None:
            found.setdefault(str(chain), Counter())[str(item.hops)] += 1
    return {chain: dict(sorted(counts.items())) for chain, counts in sorted(found.items())}


def _world_figures(items: list[Item], world: WorldModel) -> dict:
    """Answers in the larger world (as recorded at construction), and hub cues and deciding parts
    re-checked against the graph."""
    answers = Counter()
    hubs = deciding = cue_decides = 0
    types = EntityTypes(world.kg)
    for item in items:
        recorded = (item.metadata.get("world") or {}).get("answers")
        answers[
            "unknown"
            if recorded is None
            else "1"
            if recorded <= 1
            else f"<={world.scale:g}"
            if recorded <= world.scale
            else "more"
        ] += 1
        if item.constraints:  # items built from a graph (imported ones have none)
            hubs += bool(hub_cues(world, item.constraints))
            deciding += deciding_part(world.kg, item.constraints, item.answer_entity_id or "", world) is not None
            kind = AnswerKind(types, item.answer_entity_id or "")
            cue_decides += effective_hops(world.kg, world, item.constraints, kind).cues_only
    over = sum(count for bucket, count in answers.items() if bucket not in ("1", "unknown"))
    return {
        "world_scale": world.scale,
        "world_answers": dict(answers.most_common()),
        "world_answers_over_1_share": round(over / len(items), 4),
        "hub_cue_items": hubs,
        "single_cue_items": deciding,
        "deciding_appended_cue_items": cue_decides,
    }


def _first(value) -> str:
    return value if isinstance(value, str) else (list(value) or [""])[0]

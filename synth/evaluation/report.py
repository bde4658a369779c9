"""The figures of an eval: accuracy overall and by group, cost per correct answer, and whether the
dataset's difficulty labels hold for the evaluated model (accuracy falling from easy to hard)."""

import math
from collections import Counter, defaultdict
from statistics import mean

from synth.schemas import EvalAttempt

LABEL_ORDER = ("trivial", "easy", "medium", "hard", "unsolved")
"""Difficulty labels from easiest to hardest (the panel's scale)."""
GROUPS = {"hops": "by_hops", "difficulty": "by_label", "relation_family": "by_relation_family", "style": "by_style"}
OUT_OF_BUDGET = ("turn_budget_exhausted", "token_budget_exhausted")


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score 95% interval of a proportion (sound at 0 and at small n, unlike the normal one)."""
    if n == 0:
        return (0.0, 0.0)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4))


def _per_item(attempts: list[EvalAttempt]) -> dict[str, list[EvalAttempt]]:
    items: dict[str, list[EvalAttempt]] = defaultdict(list)
    for attempt in attempts:
        items[attempt.item_id].append(attempt)
    return items


def _accuracy(items: dict[str, list[EvalAttempt]]) -> dict:
    """pass@1 (mean over items of the share of correct attempts) and pass@k (any attempt correct),
    and the realized difficulty of the correct attempts (synth.filters.realized): the call that first
    showed the answer and the calls to a correct answer."""
    if not items:
        return {"items": 0, "pass_at_1": 0.0, "pass_at_k": 0.0}
    pass_1 = mean(sum(a.correct for a in group) / len(group) for group in items.values())
    pass_k = mean(any(a.correct for a in group) for group in items.values())
    correct = [attempt for group in items.values() for attempt in group if attempt.correct]
    seen = [attempt.answer_seen_at for attempt in correct if attempt.answer_seen_at is not None]
    return {
        "items": len(items),
        "pass_at_1": round(pass_1, 4),
        "pass_at_k": round(pass_k, 4),
        "answer_hit_step": round(mean(seen), 2) if seen else None,
        "calls_to_correct": round(mean(attempt.tool_calls for attempt in correct), 2) if correct else None,
    }


def summarize(attempts: list[EvalAttempt], k: int) -> dict:
    items = _per_item(attempts)
    overall = _accuracy(items)
    correct = [a for a in attempts if a.correct]
    summary: dict = {
        **overall,
        "k": k,
        "attempts": len(attempts),
        "ci95": list(wilson(overall["pass_at_1"] * overall["items"], overall["items"])),
        "tool_calls_per_correct": round(mean(a.tool_calls for a in correct), 2) if correct else None,
        "turns_per_correct": round(mean(a.turns for a in correct), 2) if correct else None,
        "tool_calls_per_attempt": round(mean(a.tool_calls for a in attempts), 2) if attempts else None,
        "prompt_tokens": sum(a.prompt_tokens for a in attempts),
        "completion_tokens": sum(a.completion_tokens for a in attempts),
        "out_of_budget_share": round(sum(a.finish_reason in OUT_OF_BUDGET for a in attempts) / len(attempts), 4)
        if attempts
        else 0.0,
        "finish_reasons": dict(Counter(a.finish_reason for a in attempts).most_common()),
    }
    for attribute, key in GROUPS.items():
        groups: dict[str, dict[str, list[EvalAttempt]]] = defaultdict(dict)
        for item_id, group in items.items():
            value = getattr(group[0], attribute)
            if value is not None:
                groups[str(value)][item_id] = group
        summary[key] = {value: _accuracy(groups[value]) for value in sorted(groups, key=_group_order)}
    summary["label_trend"] = label_trend(summary["by_label"])
    return summary


def _group_order(value: str) -> tuple:
    if value in LABEL_ORDER:
        return (0, LABEL_ORDER.index(value), "")
    return (1, int(value), "") if value.isdigit() else (2, 0, value)


def label_trend(by_label: dict[str, dict]) -> dict:
    """Whether pass@1 falls from the easiest label present to the hardest, step by step, and by how much."""
    present = [label for label in LABEL_ORDER if by_label.get(label, {}).get("items")]
    if len(present) < 2:
        return {"labels": present, "falls": None, "drop": None, "says": _says(present, None, None, by_label)}
    rates = [by_label[label]["pass_at_1"] for label in present]
    falls = all(later <= earlier for earlier, later in zip(rates, rates[1:])) and rates[-1] < rates[0]
    drop = round(rates[0] - rates[-1], 4)
    return {"labels": present, "falls": falls, "drop": drop, "says": _says(present, falls, drop, by_label)}


def _says(present: list[str], falls: bool | None, drop: float | None, by_label: dict[str, dict]) -> str:
    shown = ", ".join(f"{label} {by_label[label]['pass_at_1']:.2f} (n={by_label[label]['items']})" for label in present)
    if falls is None:
        return f"labels not checked: {'only ' + shown if present else 'no labeled items'} (two labels are needed)"
    if falls:
        return f"accuracy falls from {present[0]} to {present[-1]} by {drop:.2f}: {shown}"
    change = (0.0 - (drop or 0.0)) + 0.0  # no "-0.00"
    return f"accuracy does not fall steadily from {present[0]} to {present[-1]} (change {change:+.2f}): {shown}"

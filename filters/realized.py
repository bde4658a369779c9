"""Realized difficulty: how hard an item was for the runs that solved it, read from the attempts the
panel already makes (and, per version, the teacher's rollouts), beside the pass rate.

Shortcut-resistant pipelines (FORT-Searcher) measure this from trajectories: a question whose answer
turns up in the first search result, or that models answer from memory, is easier than its pass rate
says. Per item:

    answer_hit_step    median, over correct search attempts, of the call whose result first showed
                       the answer (synth.solving.trajectory_reading); None when no correct attempt saw it
    calls_to_correct   mean tool calls of the correct search attempts (the label's mean_tool_calls)
    tokens_to_correct  mean prompt + completion tokens of the correct search attempts of models (a
                       model-free baseline such as the BM25 reader spends none)
    closed_book_rate   share of closed-book attempts that were right (None: none ran)
"""

from statistics import mean, median

from synth.schemas import DifficultyName, SolverAttempt

REALIZED_FIGURES = ("answer_hit_step", "calls_to_correct", "tokens_to_correct", "closed_book_rate")
EASIER: dict[DifficultyName, DifficultyName] = {"hard": "medium", "medium": "easy"}


def realized_difficulty(attempts: list[SolverAttempt]) -> dict[str, float | None]:
    """The module's figures for one item's attempts (failed calls already left out)."""
    solved = [attempt for attempt in attempts if attempt.condition == "search" and attempt.correct]
    seen = [attempt.answer_seen_at for attempt in solved if attempt.answer_seen_at is not None]
    modeled = [attempt for attempt in solved if attempt.trajectory_id is not None]  # not a model-free baseline
    closed = [attempt for attempt in attempts if attempt.condition == "closed_book"]
    return {
        "answer_hit_step": float(median(seen)) if seen else None,
        "calls_to_correct": mean(attempt.num_tool_calls for attempt in solved) if solved else None,
        "tokens_to_correct": mean(attempt.usage.total_tokens for attempt in modeled) if modeled else None,
        "closed_book_rate": sum(attempt.correct for attempt in closed) / len(closed) if closed else None,
    }


def with_early_hit(
    label: DifficultyName, realized: dict[str, float | None], hops: int, early_hit_step: float | None
) -> DifficultyName:
    """The pass-rate label, one level easier where `early_hit_step` is set and the item's correct
    searches saw the answer by that call though its chain has more hops (the label rule's option
    `consensus.thresholds.early_hit_step`; off by default)."""
    seen = realized["answer_hit_step"]
    if early_hit_step is None or seen is None or hops <= seen or seen > early_hit_step:
        return label
    return EASIER.get(label, label)


def realized_by_hops(items: list, labels: list, trajectories: list) -> dict[str, dict[str, float | int | None]]:
    """The version summary's `realized_difficulty`: per hop count, the items and the mean of each
    figure over the items that have it (the panel's from the labels; `teacher_*` from the teacher's
    correct rollouts)."""
    label_of = {label.item_id: label for label in labels}
    teacher: dict[str, list] = {}
    for trajectory in trajectories:
        if trajectory.role == "teacher" and trajectory.correct:
            teacher.setdefault(trajectory.item_id, []).append(trajectory)
    rows: dict[int, list[dict[str, float | None]]] = {}
    for item in items:
        label, solved = label_of.get(item.id), teacher.get(item.id, [])
        seen = [trajectory.answer_seen_at for trajectory in solved if trajectory.answer_seen_at is not None]
        rows.setdefault(item.hops, []).append(
            {
                "answer_hit_step": label.answer_hit_step if label else None,
                "calls_to_correct": label.mean_tool_calls if label else None,
                "tokens_to_correct": label.tokens_to_correct if label else None,
                "closed_book_rate": label.closed_book_rate if label else None,
                "teacher_answer_hit_step": float(median(seen)) if seen else None,
                "teacher_calls_to_correct": mean(t.num_tool_calls for t in solved) if solved else None,
            }
        )
    summary = {}
    for hops, figures in sorted(rows.items()):
        entry: dict[str, float | int | None] = {"items": len(figures)}
        for key in figures[0]:
            known = [value for row in figures if (value := row[key]) is not None]
            entry[key] = round(mean(known), 3) if known else None
        summary[str(hops)] = entry
    return summary

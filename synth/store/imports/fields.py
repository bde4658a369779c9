"""Where a row keeps its question, answers and outcome, as users' files have them.

Dotted paths reach nested fields (`reward_model.ground_truth`, `metadata.reward`). Answer values may
be a string, a number, a list (nested lists are flattened: `[["Derby"]]` is `Derby`, never the
string "[['Derby']]") or an object holding `target`, `answers`, `text` or `value`. The outcome of a
row (did its run succeed?) is a boolean, a number compared with `outcome_threshold`, or a string
such as "true"/"false"; a failed run becomes a rejected trajectory (a DPO negative, never an SFT
row). Without `--outcome-field`, the first of OUTCOME_KEYS a row has is used, and the import says so.
"""

from typing import Any

from pydantic import Field

from synth.config import FrozenConfig
from synth.store.imports.base import RowError

ANSWER_KEYS = ("golden_answers", "answer", "reward_model.ground_truth")
ALIAS_KEYS = ("answer_aliases", "aliases")
OUTCOME_KEYS = ("reward", "score", "correct", "is_correct", "em", "exact_match", "f1", "acc", "accuracy", "success")
OUTCOME_GROUPS = ("metrics", "metric", "eval", "evaluation", "scores", "result", "results", "judge")
"""Objects a row may keep its outcome in: `metrics.em`, `eval.score`, ..."""
TRUE = {"true", "yes", "1", "correct", "success", "pass", "passed"}
FALSE = {"false", "no", "0", "incorrect", "failure", "fail", "failed"}


class ImportFields(FrozenConfig):
    question_field: str | None = Field(
        default=None, description="Row field with the question (dotted); default: the first user message."
    )
    answer_field: str | None = Field(
        default=None,
        description="Row field with the reference answer(s) (dotted); default: golden_answers, answer or "
        "reward_model.ground_truth, else the trajectory's final answer.",
    )
    aliases_field: str | None = Field(
        default=None, description="Row field with other accepted answers (dotted); default: answer_aliases, aliases."
    )
    outcome_field: str | None = Field(
        default=None,
        description="Row field saying whether the run succeeded (dotted; bool, number or string); default: the "
        "first of reward, score, correct, is_correct, em, exact_match, f1, acc, accuracy, success the rows have, at "
        "their top level or under metrics, eval, scores, result or judge.",
    )
    outcome_threshold: float = Field(
        default=1.0, description="A numeric outcome at or above this is a success (reward 1.0, em 1)."
    )


def field_value(row: dict[str, Any], dotted: str) -> Any:
    value: Any = row
    for key in dotted.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return value


def answers_of(value: Any, where: str) -> list[str]:
    """The answers a field holds, by the rules in the module docstring."""
    if isinstance(value, bool):
        raise RowError(f"`{where}` holds a boolean ({value}), not an answer")
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, int | float):
        return [format(value, "g") if isinstance(value, float) else str(value)]
    if isinstance(value, dict):
        inner = next((value[key] for key in ("target", "answers", "text", "value") if key in value), None)
        if inner is None:
            raise RowError(f"`{where}` is an object without target, answers, text or value")
        return answers_of(inner, where)
    if isinstance(value, list | tuple):
        return [answer for part in value for answer in answers_of(part, where)]
    raise RowError(f"`{where}` holds {type(value).__name__}, not an answer")


def row_answers(row: dict[str, Any], fields: ImportFields) -> list[str] | None:
    """The row's reference answers and aliases, or None when it has none (the trajectory may give one)."""
    keys = (fields.answer_field,) if fields.answer_field else ANSWER_KEYS
    key = next((key for key in keys if field_value(row, key) is not None), None)
    if key is None:
        if fields.answer_field:
            raise RowError(f"no `{fields.answer_field}` field (--answer-field)")
        return None
    answers = answers_of(field_value(row, key), key)
    if not answers:
        raise RowError(f"`{key}` holds no answer (an empty value: {field_value(row, key)!r})")
    alias_keys = (fields.aliases_field,) if fields.aliases_field else ALIAS_KEYS
    for alias_key in alias_keys:
        value = field_value(row, alias_key)
        if value is None and alias_key == fields.aliases_field:
            raise RowError(f"no `{alias_key}` field (--aliases-field)")
        if value is not None:
            answers += answers_of(value, alias_key)
    return list(dict.fromkeys(answers))


def row_question(row: dict[str, Any], fields: ImportFields) -> str | None:
    if fields.question_field is None:
        return None
    value = field_value(row, fields.question_field)
    if not isinstance(value, str) or not value.strip():
        raise RowError(f"`{fields.question_field}` holds no question text (--question-field)")
    return value.strip()


def outcome_key(row: dict[str, Any], fields: ImportFields) -> str | None:
    """The field holding the row's outcome: `--outcome-field`, else the first of OUTCOME_KEYS the row
    has, at its top level or inside one of OUTCOME_GROUPS (R1-Searcher and FlashRAG keep `score` or
    `metrics.em`)."""
    if fields.outcome_field:
        return fields.outcome_field
    found = next((key for key in OUTCOME_KEYS if _scalar(field_value(row, key))), None)
    if found is not None:
        return found
    return next(
        (
            f"{group}.{key}"
            for group in OUTCOME_GROUPS
            for key in OUTCOME_KEYS
            if _scalar(field_value(row, f"{group}.{key}"))
        ),
        None,
    )


def _scalar(value: Any) -> bool:
    return isinstance(value, bool | int | float) or (isinstance(value, str) and value.strip().lower() in TRUE | FALSE)


def row_outcome(row: dict[str, Any], fields: ImportFields) -> bool | None:
    """Whether the row's run succeeded; None when the row does not say."""
    key = outcome_key(row, fields)
    if key is None:
        return None
    value = field_value(row, key)
    if value is None:
        raise RowError(f"no `{key}` field (--outcome-field)")
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value >= fields.outcome_threshold
    if isinstance(value, str) and value.strip().lower() in TRUE | FALSE:
        return value.strip().lower() in TRUE
    raise RowError(f"`{key}` holds {value!r}: an outcome is a boolean, a number or true/false")

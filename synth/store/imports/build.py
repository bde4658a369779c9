"""Turn parsed rows into the records of a version: one teacher Trajectory per rollout and one Item
per question.

Ids: the row's own (item_id, trajectory_id, chosen_id, rejected_id) when it has them, so an export
imported again keeps its ids; else content hashes. A rollout seen twice (the chosen side of several
DPO pairs, a repeated row) is stored once. An item's answer comes from --answer-field, else the
first of golden_answers, answer, reward_model.ground_truth, else the final answer of a selected
trajectory (metadata answer_source="trajectory"; a rejected side never gives the answer). Its hops
are the tool calls of its first selected trajectory, answer calls not counted, at least 1.

Every trajectory is read as a teacher's is (`synth.solving.rejection.read_calls`): its step labels,
the call that first showed the answer, and the checks beyond the answer that flag it. Those are
recorded, never applied: an imported row keeps the outcome its file gives it, and `--where` on
`findings` or `step_labels` picks the rows an export takes.
"""

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from synth.contract.portable import extract_answer
from synth.errors import InputFileError
from synth.hashing import content_hash
from synth.kg.name_mentions import WorldNames
from synth.schemas import ChatMessage, Item, Provenance, Trajectory
from synth.solving.rejection import RejectionConfig, read_calls
from synth.store.dialects import looks_like_tool_use
from synth.store.export.dpo import PAIRED_WITH
from synth.store.imports.base import Parsed, Rollout, RowError
from synth.store.imports.fields import ANSWER_KEYS, ImportFields, outcome_key, row_answers, row_outcome, row_question
from synth.store.imports.messages import first_problem

RECIPE = "imported"


@dataclass
class _Question:
    id: str
    question: str
    row: int
    answers: list[str] | None
    trajectories: list[str] = field(default_factory=list)


@dataclass
class Built:
    items: list[Item]
    trajectories: list[Trajectory]
    rows: int = 0
    merged: int = 0
    """Rollouts that repeated one already read (e.g. the chosen side of a DPO pair after the first)."""
    answers_from_trajectories: int = 0
    models: set[str] = field(default_factory=set)
    unread_tool_use: list[tuple[int, str]] = field(default_factory=list)
    """(row, the sign of tool use) of rows whose text looks like tool use in no dialect synth reads."""
    outcomes: dict[str, int] = field(default_factory=dict)
    """Outcome field -> rows whose run failed by it (imported as rejected trajectories)."""
    trimmed: int = 0
    """Rollouts that went on after their last answer with a user turn that got no answer (a user's
    goodbye): trimmed to that answer, so they end where a trainer's target must."""
    findings: dict[str, int] = field(default_factory=dict)
    """Check beyond the answer -> trajectories it flags (recorded, not applied)."""
    unanswered_failures: list[int] = field(default_factory=list)
    """Rows of questions with no reference answer whose every rollout failed: nothing says what
    the right answer is, so they are left out (and counted)."""


def final_answer(messages: list[ChatMessage]) -> str | None:
    """The last answer given: an `answer` tool call's argument, or <answer> text."""
    for message in reversed(messages):
        if message.role != "assistant":
            continue
        for call in reversed(message.tool_calls or []):
            if call.function.name == "answer":
                try:
                    value = json.loads(call.function.arguments)
                except json.JSONDecodeError:
                    continue
                if isinstance(value, dict) and isinstance(value.get("answer"), str) and value["answer"].strip():
                    return value["answer"].strip()
        found = extract_answer(message.content or "")
        if found:
            return found
    return None


def _calls(messages: list[ChatMessage], exclude: str = "") -> int:
    return sum(call.function.name != exclude for message in messages for call in message.tool_calls or [])


class Builder:
    def __init__(self, path: Path, fields: ImportFields, strict: bool = False, names: WorldNames | None = None):
        self.path, self.fields, self.strict, self.names = path, fields, strict, names
        self.questions: dict[str, _Question] = {}
        self.trajectories: dict[str, dict[str, Any]] = {}
        self.built = Built([], [])

    def add(self, number: int, row: dict[str, Any], parse: Callable[[dict[str, Any]], Parsed]) -> None:
        try:
            parsed = parse(row)
            for rollout in parsed.rollouts:
                self._trim(rollout)
            self._unread_calls(number, parsed)
            answers = row_answers(row, self.fields)
            self._outcome(row, parsed)
            given = row.get("model")
            model = given if isinstance(given, str) and given.strip() else "imported"
            text = row_question(row, self.fields) or parsed.question
            question = self._question(number, row.get("item_id"), text, answers)
            ids = [self._trajectory(number, question, rollout, model) for rollout in parsed.rollouts]
            for rollout, trajectory_id in zip(parsed.rollouts, ids):
                if rollout.paired_with is not None:
                    paired = self.trajectories[trajectory_id]["metadata"].setdefault(PAIRED_WITH, [])
                    if ids[rollout.paired_with] not in paired:
                        paired.append(ids[rollout.paired_with])
        except RowError as error:
            raise InputFileError(f"{self.path} row {number}: {error}") from None
        except ValidationError as error:
            raise InputFileError(f"{self.path} row {number}: {first_problem(error)}") from None
        self.built.rows += 1
        self.built.models.add(model)

    def _trim(self, rollout: Rollout) -> None:
        """End the rollout at its last answer (an assistant turn without calls) when a user turn opened
        an exchange after it that never got an answer: tau-bench conversations end on the user's
        `###STOP###`, or on a transfer call's receipt after the user asked for a human."""
        messages = rollout.messages
        last = next((index for index in range(len(messages) - 1, -1, -1) if _answers(messages[index])), None)
        if last is not None and last < len(messages) - 1 and messages[last + 1].role == "user":
            rollout.messages = messages[: last + 1]
            self.built.trimmed += 1

    def _unread_calls(self, number: int, parsed: Parsed) -> None:
        """A rollout without tool calls whose text looks like tool use: reported, or refused (strict)."""
        for rollout in parsed.rollouts:
            if any(message.tool_calls for message in rollout.messages):
                continue
            sign = next(
                (found for message in rollout.messages if (found := looks_like_tool_use(message.content))), None
            )
            if sign is None:
                continue
            if self.strict:
                raise RowError(
                    f"its text looks like tool use ({sign!r}) in no dialect synth reads (OpenAI tool_calls, "
                    "<tool_call>, <search>, <|begin_of_query|>, Action:/Observation:); convert it, or drop --strict "
                    "to import it without calls"
                )
            self.built.unread_tool_use.append((number, sign))
            return

    def _outcome(self, row: dict[str, Any], parsed: Parsed) -> None:
        """A row whose run failed (by its outcome field) holds rejected trajectories, never SFT rows."""
        succeeded = row_outcome(row, self.fields)
        if succeeded is None:
            return
        key = outcome_key(row, self.fields) or "outcome"  # found: row_outcome read it
        for rollout in parsed.rollouts:
            if succeeded:
                rollout.correct = True if rollout.correct is None else rollout.correct
            elif rollout.selected:
                rollout.selected, rollout.correct, rollout.reject_reason = False, False, "incorrect"
        self.built.outcomes.setdefault(key, 0)
        if not succeeded:
            self.built.outcomes[key] += 1

    def _question(self, number: int, item_id: Any, question: str, answers: list[str] | None) -> _Question:
        key = str(item_id) if item_id else content_hash({"recipe": RECIPE, "question": question})
        known = self.questions.get(key)
        if known is None:
            known = self.questions[key] = _Question(key, question, number, answers)
        elif known.question != question:
            raise RowError(f"item_id {key!r} was used on row {known.row} for another question")
        elif known.answers is None:
            known.answers = answers
        return known

    def _trajectory(self, number: int, question: _Question, rollout: Rollout, model: str) -> str:
        messages = rollout.messages
        trajectory_id = rollout.id or content_hash(
            {
                "messages": [message.model_dump(mode="json") for message in messages],
                "tools": rollout.tools,
                "selected": rollout.selected,
            }
        )
        known = self.trajectories.get(trajectory_id)
        if known is not None:
            if known["messages"] != messages or known["item_id"] != question.id:
                raise RowError(
                    f"trajectory id {trajectory_id!r} was used on row {known['metadata']['row']} for another trajectory"
                )
            self.built.merged += 1
            return trajectory_id
        self.trajectories[trajectory_id] = dict(
            id=trajectory_id,
            item_id=question.id,
            role="teacher",
            model=model,
            messages=messages,
            tools=rollout.tools,
            final_answer=final_answer(messages),
            correct=rollout.correct,
            num_tool_calls=_calls(messages),
            selected=rollout.selected,
            reject_reason=rollout.reject_reason,
            metadata={"source": self.path.name, "row": number},
        )
        question.trajectories.append(trajectory_id)
        return trajectory_id

    def finish(self) -> Built:
        trajectories = {key: Trajectory(**values) for key, values in self.trajectories.items()}
        kept: dict[str, Trajectory] = {}
        for question in self.questions.values():
            own = [trajectories[key] for key in question.trajectories]
            if question.answers is None and not any(trajectory.selected for trajectory in own):
                self.built.unanswered_failures.append(question.row)
                continue
            item = self._item(question, own)
            self.built.items.append(item)
            kept.update((trajectory.id, self._read(trajectory, item)) for trajectory in own)
        self.built.trajectories = list(kept.values())
        return self.built

    def _read(self, trajectory: Trajectory, item: Item) -> Trajectory:
        """The trajectory with its step labels, answer sighting and findings (see the module)."""
        right = trajectory.correct if trajectory.correct is not None else trajectory.selected
        read = read_calls(trajectory, item, right, self.names, RejectionConfig())
        for finding in read["findings"]:
            self.built.findings[finding] = self.built.findings.get(finding, 0) + 1
        return trajectory.model_copy(update=read)

    def _item(self, question: _Question, trajectories: list[Trajectory]) -> Item:
        first = next((trajectory for trajectory in trajectories if trajectory.selected), trajectories[0])
        answers, source = question.answers, "file"
        if answers is None:
            selected = [trajectory for trajectory in trajectories if trajectory.selected]
            answer = next((t.final_answer for t in selected if t.final_answer), None) or _final_turn(selected)
            if answer is None:
                raise InputFileError(
                    f"{self.path} row {question.row}: no answer for {question.question[:80]!r}: the row has none of "
                    f"{', '.join(ANSWER_KEYS)} and its trajectory gives no final answer; pass --answer-field FIELD"
                )
            answers, source = [answer], "trajectory"
            self.built.answers_from_trajectories += 1
        return Item(
            id=question.id,
            question=question.question,
            answer=answers[0],
            aliases=answers[1:],
            recipe=RECIPE,
            hops=max(1, _calls(first.messages, exclude="answer")),
            provenance=Provenance(generator="import", models={"teacher": first.model}),
            metadata={"answer_source": source, "source": self.path.name, "row": question.row},
        )


def build(
    path: Path,
    rows: Iterable[tuple[int, dict[str, Any]]],
    parse: Callable[[dict[str, Any]], Parsed],
    fields: ImportFields,
    strict: bool = False,
    names: WorldNames | None = None,
) -> Built:
    builder = Builder(path, fields, strict, names)
    for number, row in rows:
        builder.add(number, row, parse)
    return builder.finish()


def _final_turn(trajectories: list[Trajectory]) -> str | None:
    """The closing text of a conversation answered in plain words (a customer-service agent's last
    reply), when no trajectory tags its answer or calls `answer`."""
    for trajectory in trajectories:
        last = trajectory.messages[-1]
        if _answers(last):
            return (last.content or "").strip()
    return None


def _answers(message: ChatMessage) -> bool:
    return message.role == "assistant" and not message.tool_calls and bool((message.content or "").strip())

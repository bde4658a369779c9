"""SFT rows in Search-R1's tag protocol, so a policy can be warmed up on exactly the text it will
produce in Search-R1 RL rollouts:

    {"messages": [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": TEXT}],
     "item_id": str, "trajectory_id": str}

PROMPT is the `searchr1` export's prompt (or --prompt-template) with the item's question. TEXT walks
the assistant turns: reasoning and content become thoughts (free text wrapped in <think>...</think>,
text already in Search-R1 tags kept as it is), a `search` call becomes `<search> QUERY </search>`
followed by its result as `\n\n<information>RESULT</information>\n\n` (as Search-R1's rollout inserts
it), an `answer` call `<answer> X </answer>`. Parts are joined by "\n", except right after an
information block. Trajectories Search-R1 could not have produced (another tool such as `open`,
unparseable arguments, a call without a result, a second user turn) are skipped and counted.
"""

import json
import re
from collections import Counter
from typing import Iterator

import pyarrow as pa

from synth.schemas import ChatMessage, ToolCall, Trajectory
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.prompts import SEARCH_R1_PROMPT, load_template, render
from synth.store.export.sink import check_output, write_rows
from synth.store.export.trajectories import PLAIN_MESSAGES, none_selected_note, require_trajectories, training_trajectories
from synth.store.reader import read_columns

SCHEMA = pa.schema([("messages", PLAIN_MESSAGES), ("item_id", pa.string()), ("trajectory_id", pa.string())])

TAGGED = re.compile(r"<(think|search|information|answer)>.*?</\1>", re.DOTALL)


class Unsupported(Exception):
    """The trajectory has a step Search-R1's protocol cannot express; the message is the reason."""


def thought(text: str) -> str:
    """`text` with its free text (outside Search-R1 tags) wrapped in <think>; fully tagged text is kept as it is."""
    pieces, free_text, position = [], False, 0
    for tagged in [*TAGGED.finditer(text), None]:
        free = text[position:tagged.start() if tagged else len(text)].strip()
        if free:
            pieces.append(f"<think>{free}</think>")
            free_text = True
        if tagged:
            pieces.append(tagged.group(0))
            position = tagged.end()
    return "\n".join(pieces) if free_text else text


def search_step(query: str, result: str) -> str:
    return f"<search> {query} </search>\n\n<information>{result}</information>\n\n"


def answer_step(answer: str) -> str:
    return f"<answer> {answer} </answer>"


def join_steps(steps: list[str]) -> str:
    text = ""
    for step in steps:
        if text and not text.endswith("\n\n"):
            text += "\n"
        text += step
    return text


def _action(call: ToolCall, result: str | None) -> str:
    name = call.function.name
    if name not in ("search", "answer"):
        raise Unsupported(f"calls {name}")
    try:
        arguments = json.loads(call.function.arguments)
    except json.JSONDecodeError:
        arguments = None
    value = arguments.get("query" if name == "search" else "answer") if isinstance(arguments, dict) else None
    if not isinstance(value, str):
        raise Unsupported(f"malformed {name} call")
    if name == "answer":
        return answer_step(value)
    if result is None:
        raise Unsupported("unanswered search call")
    return search_step(value, result)


def assistant_text(messages: list[ChatMessage]) -> str:
    """The assistant side of a trajectory as one Search-R1 completion; Unsupported if impossible."""
    if sum(message.role == "user" for message in messages) != 1:
        raise Unsupported("more than one user turn")
    steps: list[str] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.role != "assistant":
            continue
        steps += [thought(text) for text in (message.reasoning_content, message.content) if text]
        results = []
        while index < len(messages) and messages[index].role == "tool":
            results.append(messages[index].content)
            index += 1
        for number, call in enumerate(message.tool_calls or []):
            steps.append(_action(call, results[number] if number < len(results) else None))
    return join_steps(steps)


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet", ".jsonl"))
    require_trajectories(request, "Search-R1 SFT")
    template = load_template(request.prompt_template, SEARCH_R1_PROMPT)
    questions = dict(read_columns(request.settings, request.version, "items", ["id", "question"]))
    skipped: Counter[str] = Counter()

    def rows() -> Iterator[dict]:
        for trajectory in training_trajectories(request, "selected"):
            try:
                text = assistant_text(trajectory.messages)
            except Unsupported as reason:
                skipped[str(reason)] += 1
                continue
            question = questions.get(trajectory.item_id) or next(m.content for m in trajectory.messages if m.role == "user")
            messages = [{"role": "user", "content": render(template, question)}, {"role": "assistant", "content": text}]
            yield {"messages": messages, "item_id": trajectory.item_id, "trajectory_id": trajectory.id}

    count = write_rows(rows(), SCHEMA, request.out)
    notes = none_selected_note(request, count + sum(skipped.values()))
    if skipped:
        reasons = ", ".join(f"{reason}: {number}" for reason, number in skipped.most_common())
        notes.append(f"skipped {sum(skipped.values())} selected trajectories Search-R1's protocol cannot express ({reasons})")
    return ExportResult(request.out, count, notes)

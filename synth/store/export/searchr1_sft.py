"""SFT rows in Search-R1's tag protocol, so a policy can be warmed up on exactly the text it will
produce in Search-R1 RL rollouts:

    {"messages": [{"role": "user", "content": PROMPT}, {"role": "assistant", "content": TEXT}],
     "item_id": str, "trajectory_id": str}

PROMPT is the `searchr1` export's prompt (or --prompt-template) with the item's question; an
imported trajectory keeps its own prompt and system turn unless --prompt-template is given. The
trajectory is rendered under the agent contract first (default `searchr1`: results shown exactly as
Search-R1's trainer shows its retriever's, `Doc 1(Title: "T") text`), then TEXT walks the assistant
turns: reasoning and content become thoughts (free text wrapped in <think>...</think>,
text already in Search-R1 tags kept as it is), a `search` call becomes `<search> QUERY </search>`
followed by its result as `\n\n<information>RESULT</information>\n\n` (as Search-R1's rollout inserts
it), an `answer` call `<answer> X </answer>`. Parts are joined by "\n", except right after an
information block. Trajectories Search-R1 could not have produced (another tool such as `open`,
unparseable arguments, a call without a result, a second user turn) are skipped and counted.
"""

import json
import re
from collections.abc import Iterator

import pyarrow as pa

from synth.schemas import ChatMessage, ToolCall
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.prompts import SEARCH_R1_PROMPT, load_template, render, search_r1_answer_tag_warning
from synth.store.export.sink import check_output, write_rows
from synth.store.export.trajectories import (
    PLAIN_MESSAGES,
    Skipped,
    export_contract,
    nothing_to_export,
    rendered,
    require_tag_finish,
    require_trajectories,
)

DEFAULT_CONTRACT = "searchr1"
"""Search-R1's trainer shows retrieved passages its own way; SFT data for it shows them the same way."""

SCHEMA = pa.schema([("messages", PLAIN_MESSAGES), ("item_id", pa.string()), ("trajectory_id", pa.string())])

TAGGED = re.compile(r"<(think|search|information|answer)>.*?</\1>", re.DOTALL)


class Unsupported(Exception):
    """The trajectory has a step Search-R1's protocol cannot express; the message is the reason."""


def thought(text: str) -> str:
    """`text` with its free text (outside Search-R1 tags) wrapped in <think>; fully tagged text is kept as it is."""
    pieces, free_text, position = [], False, 0
    for tagged in [*TAGGED.finditer(text), None]:
        free = text[position : tagged.start() if tagged else len(text)].strip()
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
    if (
        name == "search"
        and isinstance(arguments, dict)
        and isinstance(arguments.get("query_list"), list)
        and len(arguments["query_list"]) == 1
    ):
        value = arguments["query_list"][0]
    if name == "search" and isinstance(value, list):
        raise Unsupported("a batched search (several queries in one call; Search-R1 searches one at a time)")
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
    contract = export_contract(request, DEFAULT_CONTRACT)
    require_tag_finish(contract, "searchr1-sft")
    skipped = Skipped()
    own_prompts = request.prompt_template is None  # an imported row keeps the prompt and system turn it came with
    replaced = [0]

    def rows() -> Iterator[dict]:
        for trajectory, conversation in rendered(request, "selected", contract, skipped, lambda q: render(template, q)):
            try:
                text = assistant_text(conversation.messages)
            except Unsupported as reason:
                skipped.reasons[str(reason)] += 1
                continue
            own = own_prompts and "source" in trajectory.metadata
            if own and finishes_by_call(trajectory):  # its prompt says to call `answer`: the completion uses tags
                own = False
                replaced[0] += 1
            source = trajectory.messages if own else conversation.messages
            prompt = next(message.content for message in source if message.role == "user")
            system = [{"role": "system", "content": m.content} for m in source[:1] if own and m.role == "system"]
            messages = [*system, {"role": "user", "content": prompt}, {"role": "assistant", "content": text}]
            yield {"messages": messages, "item_id": trajectory.item_id, "trajectory_id": trajectory.id}

    count = write_rows(
        rows(),
        SCHEMA,
        request.out,
        lambda: nothing_to_export(request, "Search-R1 SFT", skipped),
        lambda: skipped.require_calls(request, "Search-R1 SFT"),
    )
    warning = search_r1_answer_tag_warning(template)
    notes = skipped.notes() + ([warning] if warning else [])
    if replaced[0]:
        notes.append(
            f"{replaced[0]} imported trajectories asked their model to call `answer`; their rows use this format's "
            "prompt instead, which asks for the <answer> tags the completion uses"
        )
    return ExportResult(request.out, count, notes)


def finishes_by_call(trajectory) -> bool:
    """Whether the trajectory's own prompt has the model finish by calling `answer` (its tools offer it,
    or its system or first user turn says so) rather than with <answer> tags."""
    if any(tool.get("function", {}).get("name") == "answer" for tool in trajectory.tools):
        return True
    prompt = " ".join(m.content or "" for m in trajectory.messages[:2] if m.role in ("system", "user"))
    return re.search(r"\bcall(?:ing)?\W+(?:the\W+)?`?answer`?(?:\W+tool)?\b", prompt, re.IGNORECASE) is not None

"""SFT rows in LLaMA-Factory's sharegpt format with tools, from the selected teacher trajectories:

    {"conversations": [{"from": "human" | "function_call" | "observation" | "gpt", "value": str}, ...],
     "system": str, "tools": str (JSON list of the contract's tool schemas), "item_id": str, "trajectory_id": str}

LLaMA-Factory reads it with this `dataset_info.json` entry (the export prints it):

    {"file_name": "<file>", "formatting": "sharegpt",
     "columns": {"messages": "conversations", "system": "system", "tools": "tools"}}

Its converter keeps a row only when turns alternate human/observation with gpt/function_call and
the count is even, so: an assistant turn with calls is one `function_call` turn whose value is the
call as JSON (`{"name", "arguments"}` with arguments as an object; a list for parallel calls); text
or reasoning beside the calls is kept in front of the JSON, which then goes between
<tool_call> and </tool_call> (LLaMA-Factory >= 0.9.4 keeps such text as the turn's thought, where
its `openai` format drops it). Parallel calls are written one per `function_call` turn, each
followed by its own `observation`: one observation holding several results would need a separator,
and the one LLaMA-Factory uses for its `openai` rows (`</tool_response><tool_response>`) is Qwen's
markup, shown as literal text by every other template. Every row ends with a `gpt` turn.
Conversations that still cannot alternate are skipped and counted.
"""

import json
from collections.abc import Iterator

import pyarrow as pa

from synth.contract.render import Unrenderable
from synth.schemas import ChatMessage
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import check_output, write_rows
from synth.store.export.trajectories import (
    Skipped,
    arguments_value,
    export_contract,
    nothing_to_export,
    rendered,
    require_trajectories,
)

SCHEMA = pa.schema(
    [
        ("conversations", pa.list_(pa.struct([("from", pa.string()), ("value", pa.string())]))),
        ("system", pa.string()),
        ("tools", pa.string()),
        ("item_id", pa.string()),
        ("trajectory_id", pa.string()),
    ]
)


def dataset_info(file_name: str) -> dict:
    return {
        "file_name": file_name,
        "formatting": "sharegpt",
        "columns": {"messages": "conversations", "system": "system", "tools": "tools"},
    }


def _thought(message: ChatMessage) -> str:
    parts = [f"<think>\n{message.reasoning_content}\n</think>\n\n"] if message.reasoning_content else []
    return "".join(parts) + (message.content or "")


def _function_calls(message: ChatMessage, skipped: Skipped) -> list[tuple[str, dict[str, str]]]:
    """(call id, its `function_call` turn) per call; the turn's text and reasoning go with the first."""
    turns = []
    for index, call in enumerate(message.tool_calls or []):
        arguments = arguments_value(call.function.arguments, True, skipped)
        payload = json.dumps({"name": call.function.name, "arguments": arguments}, ensure_ascii=False)
        thought = _thought(message) if index == 0 else ""
        value = f"{thought}<tool_call>{payload}</tool_call>" if thought else payload
        turns.append((call.id, {"from": "function_call", "value": value}))
    return turns


def conversations(messages: list[ChatMessage], skipped: Skipped) -> tuple[str, list[dict[str, str]]]:
    """(system, turns) of a rendered conversation; Unrenderable when the turns cannot alternate."""
    system, body = ("", messages) if messages[0].role != "system" else (messages[0].content or "", messages[1:])
    turns: list[dict[str, str]] = []
    calls: list[tuple[str, dict[str, str]]] = []  # function_call turns waiting for their result
    for message in body:
        if message.role != "tool" and calls:
            raise Unrenderable("a call without a result")
        if message.role == "tool":
            if not calls:
                raise Unrenderable("a tool result without a call")
            answered = next((index for index, (call_id, _) in enumerate(calls) if call_id == message.tool_call_id), 0)
            turns += [calls.pop(answered)[1], {"from": "observation", "value": message.content or ""}]
        elif message.role == "assistant":
            if message.tool_calls:
                calls = _function_calls(message, skipped)
                skipped.parallel_split += len(calls) > 1
            else:
                turns.append({"from": "gpt", "value": _thought(message)})
        elif message.role == "user":
            turns.append({"from": "human", "value": message.content or ""})
        else:
            raise Unrenderable("a system turn inside the conversation")
    if calls:
        raise Unrenderable("a call without a result")
    for index, turn in enumerate(turns):
        expected = ("human", "observation") if index % 2 == 0 else ("gpt", "function_call")
        if turn["from"] not in expected:
            raise Unrenderable("turns that do not alternate as sharegpt requires")
    if not turns or turns[-1]["from"] != "gpt":
        raise Unrenderable("does not end with an answer")
    return system, turns


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".jsonl", ".json", ".parquet"))
    require_trajectories(request, "sharegpt")
    skipped = Skipped()

    def rows() -> Iterator[dict]:
        for trajectory, conversation in rendered(request, "selected", export_contract(request), skipped):
            try:
                system, turns = conversations(conversation.messages, skipped)
            except Unrenderable as reason:
                skipped.reasons[str(reason)] += 1
                continue
            yield {
                "conversations": turns,
                "system": system,
                "tools": json.dumps(conversation.tools, ensure_ascii=False),
                "item_id": trajectory.item_id,
                "trajectory_id": trajectory.id,
            }

    count = write_rows(
        rows(),
        SCHEMA,
        request.out,
        lambda: nothing_to_export(request, "sharegpt", skipped),
        lambda: skipped.require_calls(request, "sharegpt"),
    )
    entry = json.dumps({request.out.stem: dataset_info(request.out.name)})
    return ExportResult(
        request.out,
        count,
        [
            f"LLaMA-Factory: put the file in your dataset_dir and add to its dataset_info.json: {entry}",
            *skipped.notes(),
        ],
    )

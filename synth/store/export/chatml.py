"""SFT rows in the ChatML tag convention of Qwen and Hermes models: plain role/content chat, with
the tools, calls and results written into the text, for trainers and templates without a tool
channel. The conversation is the one every trajectory export shows (`synth.contract.render`).

    {"messages": [{"role": "system" | "user" | "assistant", "content": str}, ...],
     "item_id": str, "trajectory_id": str}

- The offered tools close the system message: a "# Tools" section with one JSON schema a line
  between <tools> and </tools> (keys sorted, as versions store JSON objects), and how to call them
  (a system message is added if there is none).
- An assistant turn is its content, then "\n", then one `<tool_call>\n{"name": NAME, "arguments":
  ARGS}\n</tool_call>` block per call, joined by "\n". ARGS is the stored argument string verbatim
  when it parses as JSON (nothing is re-encoded); a malformed one is written as a JSON string
  literal of itself, so every block stays valid JSON. Separated reasoning (`reasoning_content`)
  comes first, as `<think>\n...\n</think>`.
- Each run of consecutive tool messages becomes one user turn of `<tool_response>\n...\n
  </tool_response>` blocks joined by "\n". Call ids are not written (ChatML pairs by order).
"""

import json
from collections.abc import Iterator

import pyarrow as pa

from synth.schemas import ChatMessage, ToolCall
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.sink import check_output, write_rows
from synth.store.export.trajectories import (
    PLAIN_MESSAGES,
    Skipped,
    export_contract,
    nothing_to_export,
    rendered,
    require_trajectories,
)

SCHEMA = pa.schema([("messages", PLAIN_MESSAGES), ("item_id", pa.string()), ("trajectory_id", pa.string())])

TOOLS_HEADING = "# Tools\n\n"
_TOOLS_INTRO = (
    "These functions are available to you, each described by one JSON schema per line between <tools> and </tools>:\n"
)
_TOOLS_USAGE = (
    "\n\nTo call one, write its name and a JSON object of arguments between <tool_call> and </tool_call>, "
    'for example:\n<tool_call>\n{"name": "function_name", "arguments": {"argument": "value"}}\n</tool_call>\n'
    "You may call several at once, each in its own tags. Each result comes back in the next user turn, "
    "between <tool_response> and </tool_response>."
)


def tools_section(tools: list[dict]) -> str:
    lines = "\n".join(json.dumps(tool, ensure_ascii=False) for tool in tools)
    return f"{TOOLS_HEADING}{_TOOLS_INTRO}<tools>\n{lines}\n</tools>{_TOOLS_USAGE}"


def call_block(call: ToolCall) -> str:
    arguments = call.function.arguments
    try:
        json.loads(arguments)
    except json.JSONDecodeError:
        arguments = json.dumps(arguments, ensure_ascii=False)
    name = json.dumps(call.function.name, ensure_ascii=False)
    return f'<tool_call>\n{{"name": {name}, "arguments": {arguments}}}\n</tool_call>'


def assistant_text(message: ChatMessage) -> str:
    parts = [f"<think>\n{message.reasoning_content}\n</think>"] if message.reasoning_content else []
    if message.content:
        parts.append(message.content)
    head = "\n\n".join(parts)
    blocks = "\n".join(call_block(call) for call in message.tool_calls or [])
    return "\n".join(part for part in (head, blocks) if part)


def response_block(content: str) -> str:
    return f"<tool_response>\n{content}\n</tool_response>"


def chatml_messages(messages: list[ChatMessage], tools: list[dict]) -> list[dict[str, str]]:
    out: list[dict[str, str]] = []
    section = tools_section(tools) if tools else None
    if section and messages[0].role != "system":
        out.append({"role": "system", "content": section})
    for index, message in enumerate(messages):
        if message.role == "tool":
            block = response_block(message.content or "")
            if index and messages[index - 1].role == "tool":
                out[-1]["content"] += "\n" + block
            else:
                out.append({"role": "user", "content": block})
        elif message.role == "assistant":
            out.append({"role": "assistant", "content": assistant_text(message)})
        elif message.role == "system" and index == 0 and section:
            out.append({"role": "system", "content": "\n\n".join(filter(None, (message.content, section)))})
        else:
            out.append({"role": message.role, "content": message.content or ""})
    return out


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet", ".jsonl"))
    require_trajectories(request, "ChatML SFT")
    skipped = Skipped()

    def rows() -> Iterator[dict]:
        for trajectory, conversation in rendered(request, "selected", export_contract(request), skipped):
            yield {
                "messages": chatml_messages(conversation.messages, conversation.tools),
                "item_id": trajectory.item_id,
                "trajectory_id": trajectory.id,
            }

    count = write_rows(
        rows(),
        SCHEMA,
        request.out,
        lambda: nothing_to_export(request, "ChatML SFT", skipped),
        lambda: skipped.require_calls(request, "ChatML SFT"),
    )
    return ExportResult(request.out, count, skipped.notes())

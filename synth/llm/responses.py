"""Response dialects, one parser: whatever shape a server answers in becomes one `Completion` with
the final text, the reasoning, the tool calls and a finish reason.

Where servers put things (vLLM 0.32's own source read for its fields; the others from their docs):
- reasoning: `reasoning` (vLLM >= 0.10 with `--reasoning-parser`), `reasoning_content` (older vLLM,
  SGLang, DeepSeek's API), `<think>...</think>` inline in the content (any server without a
  reasoning parser), an unclosed `<think>` (cut off while thinking) or a bare `...</think>` (templates
  that open the block in the prompt, as DeepSeek-R1 distills and Qwen3 thinking templates do), and
  GPT-OSS harmony text: `<|channel|>analysis<|message|>...`, or the same with its special tokens
  stripped (`analysis...assistantfinal...`, what an offline engine decodes by default);
- tool calls: `tool_calls` (any tool parser), `<tool_call>{json}</tool_call>` blocks in the content
  (no tool parser; the Hermes/Qwen convention), harmony `commentary to=functions.NAME` messages;
- whitespace a parser leaves beside tool calls (`"\\n\\n"`) is not content;
- `finish_reason: length` while the model was still reasoning is `truncated_reasoning`, so a
  caller can tell a thinker that ran out of tokens from one that answered badly.

Calls parsed from text get no id (`""`): ids are made unique per rollout by the agent.
"""

import json
import re
from typing import Any

from synth.llm.toolcalls import parse_tool_calls
from synth.llm.types import Completion
from synth.schemas import FunctionCall, ToolCall

TRUNCATED_REASONING = "truncated_reasoning"
_THINK = re.compile(r"<think>(.*?)</think>", re.DOTALL)
_HARMONY_MESSAGE = re.compile(
    r"(?:<\|start\|>)?(?:assistant)?(?P<header>[^<]*(?:<\|channel\|>[^<]*)?(?:<\|constrain\|>[^<]*)?)"
    r"<\|message\|>(?P<body>.*?)(?:<\|end\|>|<\|call\|>|<\|return\|>|$)",
    re.DOTALL,
)
_STRIPPED_HARMONY = re.compile(r"^\s*analysis(?P<analysis>.*?)assistantfinal(?P<final>.*)$", re.DOTALL)


def read_message(message: dict[str, Any], finish_reason: str | None) -> Completion:
    """One choice's `message` of an OpenAI-shaped chat completion, from any server."""
    fields = [message.get(name) for name in ("reasoning", "reasoning_content")]
    reasoning = next((value for value in fields if isinstance(value, str) and value.strip()), None)
    calls = [_tool_call(call) for call in message.get("tool_calls") or []]
    return _completion(_text(message.get("content")), reasoning, calls, finish_reason)


def read_text(text: str | None, finish_reason: str | None) -> Completion:
    """A raw generated text (an offline engine's output, or a server with no parsers at all)."""
    return _completion(text, None, [], finish_reason)


def _completion(text: str | None, reasoning: str | None, calls: list[ToolCall], finish: str | None) -> Completion:
    reasoning_parts = [reasoning] if reasoning else []
    still_thinking = False
    if text and ("<|channel|>" in text or "<|message|>" in text):
        text, harmony_reasoning, harmony_calls, still_thinking = _harmony(text)
        reasoning_parts += harmony_reasoning
        calls = calls or harmony_calls
    elif text and (stripped := _STRIPPED_HARMONY.match(text)):
        reasoning_parts.append(stripped["analysis"])
        text = stripped["final"]
    if text and ("<think>" in text or "</think>" in text):
        text, inline, still_thinking = _split_think(text)
        reasoning_parts += inline
    if text and not calls and "<tool_call>" in text:
        text, calls = parse_tool_calls(text, id_prefix=None)
    text = text.strip() if text else None
    reasoning = "\n\n".join(part.strip() for part in reasoning_parts if part and part.strip()) or None
    if finish == "length" and reasoning and not text and not calls:
        still_thinking = True
    if calls:
        finish = "tool_calls"
    elif still_thinking and finish == "length":
        finish = TRUNCATED_REASONING
    return Completion(text=text or None, reasoning=reasoning, tool_calls=calls, finish_reason=finish)


def _split_think(text: str) -> tuple[str, list[str], bool]:
    """(text outside reasoning, reasoning blocks, whether a block is still open at the end)."""
    reasoning = _THINK.findall(text)
    rest = _THINK.sub("", text)
    if "</think>" in rest:  # the block was opened in the prompt: everything before its end is reasoning
        before, _, rest = rest.rpartition("</think>")
        reasoning.insert(0, before)
    still_open = "<think>" in rest
    if still_open:
        rest, _, open_block = rest.partition("<think>")
        reasoning.append(open_block)
    return rest, reasoning, still_open


def _harmony(text: str) -> tuple[str | None, list[str], list[ToolCall], bool]:
    """GPT-OSS harmony messages: analysis is reasoning, final (and recipient-less commentary) is
    the text, `to=functions.NAME` messages are calls."""
    content, reasoning, calls, still_thinking = [], [], [], False
    for match in _HARMONY_MESSAGE.finditer(text):
        header, body = match["header"], match["body"]
        recipient = re.search(r"to=functions\.([\w.-]+)", header)
        if recipient:
            calls.append(ToolCall(id="", function=FunctionCall(name=recipient.group(1), arguments=body.strip())))
        elif "analysis" in header:
            reasoning.append(body)
            still_thinking = match.end() == len(text) and not re.search(r"<\|(end|call|return)\|>$", match.group(0))
        else:
            content.append(body)
            still_thinking = False
    return "\n".join(content) or None, reasoning, calls, still_thinking


def _text(content: Any) -> str | None:
    """`content` as text: a string, or the text parts of a content list."""
    if isinstance(content, list):
        parts = [part.get("text", "") for part in content if isinstance(part, dict) and part.get("type") == "text"]
        return "".join(parts) if parts else None
    return content if isinstance(content, str) else None


def _tool_call(call: dict[str, Any]) -> ToolCall:
    function = call["function"]
    arguments = function.get("arguments")
    if not isinstance(arguments, str):  # some servers send an object instead of a JSON string
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    return ToolCall(id=call.get("id") or "", function=FunctionCall(name=function["name"], arguments=arguments))


def reasoning_tokens(completions: list[Completion], usage: dict[str, Any]) -> tuple[int, bool]:
    """(reasoning tokens of a response, whether estimated): the server's count where it gives one,
    else the reasoning's share of the completion's characters times its completion tokens."""
    details = usage.get("completion_tokens_details") or {}
    counted = details.get("reasoning_tokens") if isinstance(details, dict) else None
    if isinstance(counted, int) and counted >= 0:
        return counted, False
    thought = sum(len(completion.reasoning or "") for completion in completions)
    if not thought:
        return 0, False
    written = thought + sum(
        len(completion.text or "") + sum(len(call.function.arguments) for call in completion.tool_calls)
        for completion in completions
    )
    return round((usage.get("completion_tokens") or 0) * thought / written), True

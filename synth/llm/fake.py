"""A scripted, deterministic backend: for tests (queued replies, recorded requests) and for
`--llm fake` dry runs (schema-shaped filler, so a whole recipe runs without a model)."""

import json
from collections.abc import Callable, Sequence
from typing import Any

from synth.llm.base import BudgetProfile, LLMBackend
from synth.llm.responses import read_text
from synth.llm.types import ChatRequest, ChatResponse, Completion, LLMFailure
from synth.schemas import Usage

Reply = str | Completion | LLMFailure | Callable[[ChatRequest], "str | Completion | LLMFailure"]


class ScriptedBackend(LLMBackend):
    """Answers from a queue of scripted replies (then from `default`), and records every request.

    A reply may be a string, a Completion (e.g. with tool calls), an LLMFailure, or a function of
    the request. Usage counts whitespace-separated words, so token accounting is testable.
    """

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        default: Reply | None = None,
        name: str = "fake",
        native_tools: bool = False,
        budgets: BudgetProfile = "embedded",
    ):
        """`budgets`: the agent budgets its roles get (the embedded model's by default, as in a dry run)."""
        self.native_tools = native_tools
        self.budgets = budgets
        self.queue = list(replies)
        self.default = default if default is not None else dry_run_reply
        self.name = name
        self.requests: list[ChatRequest] = []
        self.batches: list[int] = []

    @property
    def model_id(self) -> str:
        return f"fake:{self.name}"

    def native_tool_calls(self) -> bool:
        return self.native_tools

    async def complete(self, requests: Sequence[ChatRequest]) -> list[ChatResponse | LLMFailure]:
        self.batches.append(len(requests))
        return [self._answer(request) for request in requests]

    def _answer(self, request: ChatRequest) -> ChatResponse | LLMFailure:
        self.requests.append(request)
        completions = []
        for _ in range(request.sampling.n):
            reply = self.queue.pop(0) if self.queue else self.default
            if callable(reply) and not isinstance(reply, (Completion, LLMFailure)):
                reply = reply(request)
            if isinstance(reply, LLMFailure):
                return reply
            # text is read like a server's with no parsers: <think> and <tool_call> blocks are split off
            completions.append(reply if isinstance(reply, Completion) else read_text(reply, "stop"))
        prompt_words = sum(len(str(message.get("content") or "").split()) for message in request.messages)
        completion_words = sum(len((completion.text or "").split()) for completion in completions)
        return ChatResponse(
            completions=completions,
            usage=Usage(prompt_tokens=prompt_words, completion_tokens=completion_words),
            model=self.model_id,
        )


def dry_run_reply(request: ChatRequest) -> str:
    """Filler that satisfies the request's JSON schema, or a fixed sentence without one."""
    if request.json_schema is not None:
        return json.dumps(_instance(request.json_schema, request.json_schema))
    return "This is a dry-run reply from the fake backend."


def _instance(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return _instance(root.get("$defs", {}).get(name, {}), root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return _instance(schema[key][0], root)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object":
        properties = schema.get("properties", {})
        required = schema.get("required", list(properties))
        return {name: _instance(properties[name], root) for name in required if name in properties}
    if kind == "array":
        return [_instance(schema.get("items", {}), root) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        text = "fake".ljust(schema.get("minLength", 0), "x")
        return text[: schema["maxLength"]] if "maxLength" in schema else text
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    return None

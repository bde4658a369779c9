"""Structured output: ask for a pydantic model (or JSON schema), validate, retry with the error fed back.

Guided decoding (vLLM, `response_format` on servers) usually makes the first reply valid; the
retries catch backends without it and models that stop early. A final failure is a
StructuredFailure holding every raw reply, never a None passed downstream.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError

from synth.llm.client import LLMClient
from synth.llm.types import ChatRequest, ChatResponse, LLMFailure

Model = TypeVar("Model", bound=BaseModel)


@dataclass
class Structured(Generic[Model]):
    value: Model
    raw: str
    attempts: int


@dataclass
class StructuredFailure:
    reason: str
    """invalid_json, schema_mismatch, or the LLM failure's reason."""
    detail: str
    raws: list[str] = field(default_factory=list)
    attempts: int = 1


def _parse(model: type[Model], text: str | None) -> Model | tuple[str, str]:
    if text is None:
        return "invalid_json", "the reply had no text"
    try:
        return model.model_validate_json(_strip_fence(text))
    except ValidationError as error:
        kind = "invalid_json" if any(item["type"] == "json_invalid" for item in error.errors()) else "schema_mismatch"
        return kind, "; ".join(
            f"{'.'.join(map(str, item['loc'])) or 'reply'}: {item['msg']}" for item in error.errors()[:5]
        )


def _strip_fence(text: str) -> str:
    stripped = text.strip()
    if stripped.startswith("```"):
        stripped = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        stripped = stripped.rsplit("```", 1)[0]
    return stripped


async def complete_structured(
    client: LLMClient, requests: Sequence[ChatRequest], model: type[Model], max_retries: int = 2
) -> list[Structured[Model] | StructuredFailure]:
    """Answer each request with a validated `model`; invalid replies are retried with the error shown."""
    schema = model.model_json_schema()
    current = [request.model_copy(update={"json_schema": schema}) for request in requests]
    results: list[Structured[Model] | StructuredFailure | None] = [None] * len(requests)
    raws: list[list[str]] = [[] for _ in requests]
    open_slots = list(range(len(requests)))
    for attempt in range(1, max_retries + 2):
        answers = await client.complete([current[index] for index in open_slots])
        still_open = []
        for index, answer in zip(open_slots, answers):
            if isinstance(answer, LLMFailure):
                results[index] = StructuredFailure(answer.reason, answer.detail, raws[index], attempt)
                continue
            text = answer.text
            raws[index].append(text or "")
            parsed = _parse(model, text)
            if isinstance(parsed, BaseModel):
                results[index] = Structured(parsed, text or "", attempt)
            elif attempt == max_retries + 1:
                results[index] = StructuredFailure(parsed[0], parsed[1], raws[index], attempt)
            else:
                current[index] = _with_feedback(current[index], answer, parsed[1])
                still_open.append(index)
        open_slots = still_open
        if not open_slots:
            break
    return results  # type: ignore[return-value]


def _with_feedback(request: ChatRequest, answer: ChatResponse, error: str) -> ChatRequest:
    messages = [
        *request.messages,
        {"role": "assistant", "content": answer.text or ""},
        {
            "role": "user",
            "content": f"That reply is not valid ({error}). Reply again with only a JSON object matching this "
            f"schema: {json.dumps(request.json_schema)}",
        },
    ]
    return request.model_copy(update={"messages": messages})

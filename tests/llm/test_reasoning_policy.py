"""How a request is fitted to a model that reasons: room to think, no stops, history as declared."""

import pytest

from synth.llm.reasoning import OFF, ReasoningPolicy
from synth.llm.types import ChatRequest, SamplingParams

HISTORY = [
    {"role": "user", "content": "Question: q"},
    {"role": "assistant", "content": "<tool_call>{}</tool_call>", "reasoning_content": "I search first."},
    {"role": "user", "content": "<tool_response>\nr\n</tool_response>"},
]


def request() -> ChatRequest:
    return ChatRequest(messages=HISTORY, sampling=SamplingParams(max_tokens=24, stop=["</answer>", "\n"]))


def test_a_model_that_reasons_gets_room_to_think_and_no_stop_strings():
    prepared = ReasoningPolicy(mode="on", tokens=1000).prepare(request(), reasons=True)
    assert prepared.sampling.max_tokens == 1024 and prepared.sampling.stop == []


def test_a_model_that_does_not_reason_gets_the_request_as_built_without_reasoning_fields():
    prepared = OFF.prepare(request(), reasons=False)
    assert prepared.sampling == request().sampling
    assert all("reasoning_content" not in message for message in prepared.messages)
    assert [m["content"] for m in prepared.messages] == [m["content"] for m in HISTORY]


@pytest.mark.parametrize(
    "history, expected",
    [
        (
            "reasoning_content",
            {"role": "assistant", "content": "<tool_call>{}</tool_call>", "reasoning_content": "I search first."},
        ),
        ("reasoning", {"role": "assistant", "content": "<tool_call>{}</tool_call>", "reasoning": "I search first."}),
        (
            "think_tags",
            {"role": "assistant", "content": "<think>\nI search first.\n</think>\n\n<tool_call>{}</tool_call>"},
        ),
        ("drop", {"role": "assistant", "content": "<tool_call>{}</tool_call>"}),
    ],
)
def test_earlier_reasoning_goes_back_as_the_model_is_declared(history, expected):
    prepared = ReasoningPolicy(mode="on", history=history).prepare(request(), reasons=True)
    assert prepared.messages[1] == expected
    assert prepared.messages[0] == HISTORY[0] and prepared.messages[2] == HISTORY[2]

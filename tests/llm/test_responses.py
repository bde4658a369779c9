"""One parser for every response shape: reasoning, tool calls, leftover whitespace and finish reasons."""

import pytest

from synth.llm.responses import TRUNCATED_REASONING, read_message, read_text, reasoning_tokens

CALL = {"id": "chatcmpl-tool-1", "type": "function", "function": {"name": "search", "arguments": '{"query": "x"}'}}
TEXT_CALL = '<tool_call>\n{"name": "search", "arguments": {"query": "x"}}\n</tool_call>'


@pytest.mark.parametrize(
    "message, finish, expected",
    [
        # vLLM >= 0.10 with reasoning and tool parsers: the field is `reasoning`, "\n\n" is left as content
        ({"content": "\n\n", "reasoning": "plan", "tool_calls": [CALL]}, "tool_calls", (None, "plan", 1, "tool_calls")),
        ({"content": "Paris", "reasoning_content": "hmm"}, "stop", ("Paris", "hmm", 0, "stop")),  # older vLLM, SGLang
        ({"content": f"<think>\nplan\n</think>\n\n{TEXT_CALL}"}, "stop", (None, "plan", 1, "tool_calls")),  # no parser
        (
            {"content": "plan it</think>\n\n<answer>Paris</answer>"},
            "stop",
            ("<answer>Paris</answer>", "plan it", 0, "stop"),
        ),
        ({"content": "<think>\nstill planning"}, "length", (None, "still planning", 0, TRUNCATED_REASONING)),
        ({"content": None, "reasoning": "still planning"}, "length", (None, "still planning", 0, TRUNCATED_REASONING)),
        ({"content": "Paris is"}, "length", ("Paris is", None, 0, "length")),  # cut while answering: not reasoning
        (
            {
                "content": "<|channel|>analysis<|message|>Search first.<|end|><|start|>assistant<|channel|>commentary "
                'to=functions.search <|constrain|>json<|message|>{"query": "x"}<|call|>'
            },
            "stop",
            (None, "Search first.", 1, "tool_calls"),
        ),
        (
            {"content": "<|channel|>analysis<|message|>Easy.<|end|><|start|>assistant<|channel|>final<|message|>Paris"},
            "stop",
            ("Paris", "Easy.", 0, "stop"),
        ),
        ({"content": "analysisEasy.assistantfinalParis"}, "stop", ("Paris", "Easy.", 0, "stop")),  # harmony, decoded
        (
            {"content": [{"type": "text", "text": "Par"}, {"type": "text", "text": "is"}]},
            "stop",
            ("Paris", None, 0, "stop"),
        ),
        ({"content": "", "reasoning_content": "r", "tool_calls": [CALL]}, "tool_calls", (None, "r", 1, "tool_calls")),
    ],
)
def test_every_dialect_reads_into_text_reasoning_and_calls(message, finish, expected):
    completion = read_message(message, finish)
    assert (completion.text, completion.reasoning, len(completion.tool_calls), completion.finish_reason) == expected


def test_calls_written_as_text_have_no_id_and_objects_become_json_strings():
    [call] = read_text(f"<think>x</think>{TEXT_CALL}", "stop").tool_calls
    assert call.id == "" and call.function.arguments == '{"query": "x"}'
    [call] = read_message(
        {"content": None, "tool_calls": [{"function": {"name": "s", "arguments": {"a": 1}}}]}, None
    ).tool_calls
    assert call.id == "" and call.function.arguments == '{"a": 1}'


def test_a_call_inside_the_reasoning_is_not_a_call():
    completion = read_text(f"<think>maybe {TEXT_CALL} later</think><answer>Paris</answer>", "stop")
    assert completion.tool_calls == [] and completion.text == "<answer>Paris</answer>"


def test_reasoning_tokens_are_the_servers_count_or_an_estimate():
    completion = read_message({"content": "ab", "reasoning": "abcdef"}, "stop")
    usage = {"completion_tokens": 8, "completion_tokens_details": {"reasoning_tokens": 5}}
    assert reasoning_tokens([completion], usage) == (5, False)
    assert reasoning_tokens([completion], {"completion_tokens": 8}) == (6, True)  # 6 of 8 characters
    assert reasoning_tokens([read_message({"content": "ab"}, "stop")], {"completion_tokens": 8}) == (0, False)

"""The trajectory exports (sft-chatml, searchr1-sft, dpo) against hand-written expected rows, and
the teacher-only rule shared with sft."""

import json

import pyarrow.parquet as pq
import pytest

from synth.errors import NotFoundError
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Trajectory
from synth.store.export import export_version
from synth.store.export.prompts import SEARCH_R1_PROMPT
from synth.store.export.searchr1_sft import Unsupported, assistant_text, thought
from synth.store.publish import VersionSpec, publish_version

SEARCH = {"type": "function", "function": {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}
ANSWER = {"type": "function", "function": {"name": "answer", "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}}}}
PROMPT = [ChatMessage(role="system", content="Use the tools."), ChatMessage(role="user", content="Which film?")]


def call(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def rollout(item_id: str, name: str, body: list[ChatMessage], role: str = "teacher", **fields) -> Trajectory:
    return Trajectory(id=f"{item_id}-{name}", item_id=item_id, role=role, model="teacher", tools=[SEARCH, ANSWER],
                      messages=PROMPT + body, **fields)


CHOSEN = [
    ChatMessage(role="assistant", content=None, reasoning_content="Two searches.", tool_calls=[
        call("c1", "search", '{"query": "Town 0 director"}'), call("c1", "search", '{"query": "Film 0", "k": 2}')]),
    ChatMessage(role="tool", tool_call_id="c1", content="Doc 1(Title: A) a"),
    ChatMessage(role="tool", tool_call_id="c1", content="Doc 1(Title: B) b"),
    ChatMessage(role="assistant", content="It is Film 0.", tool_calls=[call("c2", "answer", '{"answer": "Film 0"}')]),
    ChatMessage(role="tool", tool_call_id="c2", content="Answer recorded."),
]
WRONG = [ChatMessage(role="assistant", content="<answer>Film 9</answer>")]
MALFORMED = [
    ChatMessage(role="assistant", content="Searching.", tool_calls=[call("c1", "search", '{"query": "x"')]),
    ChatMessage(role="tool", tool_call_id="c1", content="error: not valid JSON"),
    ChatMessage(role="assistant", content="<answer>Film 0</answer>"),
]


@pytest.fixture
def published(settings, make_item):
    trajectories = [
        rollout("item-0", "chosen", CHOSEN, selected=True),
        rollout("item-0", "wrong", WRONG, reject_reason="incorrect"),
        rollout("item-0", "also-right", CHOSEN),
        rollout("item-0", "silent", WRONG, reject_reason="no_answer"),
        rollout("item-0", "solver", WRONG, role="solver", selected=True),
        rollout("item-1", "malformed", MALFORMED, selected=True),
        rollout("item-1", "wrong", WRONG, reject_reason="incorrect"),
    ]
    return publish_version(settings, VersionSpec(name="demo", recipe="multihop"),
                           {"items": [make_item(0), make_item(1)], "trajectories": trajectories})


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_sft_exports_selected_teacher_trajectories_only(settings, published, tmp_path):
    export_version(settings, "demo", "sft", tmp_path / "sft.jsonl")
    assert [row["trajectory_id"] for row in read_jsonl(tmp_path / "sft.jsonl")] == ["item-0-chosen", "item-1-malformed"]


def test_chatml_export_writes_tools_calls_and_responses_as_tags(settings, published, tmp_path):
    assert export_version(settings, "demo", "sft-chatml", tmp_path / "chatml.jsonl").rows == 2
    first, second = read_jsonl(tmp_path / "chatml.jsonl")
    system = first["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("Use the tools.\n\n# Tools\n\n")
    lines = "\n".join(json.dumps(tool, sort_keys=True) for tool in (SEARCH, ANSWER))  # versions store JSON with sorted keys
    assert f"<tools>\n{lines}\n</tools>" in system["content"]
    assert first["messages"][1:] == [
        {"role": "user", "content": "Which film?"},
        {"role": "assistant", "content": (
            "<think>\nTwo searches.\n</think>\n"
            '<tool_call>\n{"name": "search", "arguments": {"query": "Town 0 director"}}\n</tool_call>\n'
            '<tool_call>\n{"name": "search", "arguments": {"query": "Film 0", "k": 2}}\n</tool_call>')},
        {"role": "user", "content": "<tool_response>\nDoc 1(Title: A) a\n</tool_response>\n<tool_response>\nDoc 1(Title: B) b\n</tool_response>"},
        {"role": "assistant", "content": 'It is Film 0.\n<tool_call>\n{"name": "answer", "arguments": {"answer": "Film 0"}}\n</tool_call>'},
        {"role": "user", "content": "<tool_response>\nAnswer recorded.\n</tool_response>"},
    ]
    assert second["messages"][2] == {"role": "assistant", "content": (
        'Searching.\n<tool_call>\n{"name": "search", "arguments": "{\\"query\\": \\"x\\""}\n</tool_call>')}
    assert {message["role"] for row in (first, second) for message in row["messages"]} == {"system", "user", "assistant"}


def test_searchr1_sft_export_writes_one_completion_in_search_r1_tags(settings, published, tmp_path, make_item):
    out = tmp_path / "searchr1.parquet"
    result = export_version(settings, "demo", "searchr1-sft", out)
    rows = pq.read_table(out).to_pylist()
    assert result.rows == 1 and result.notes == [
        "skipped 1 selected trajectories Search-R1's protocol cannot express (malformed search call: 1)"]
    prompt, completion = rows[0]["messages"]
    assert prompt == {"role": "user", "content": SEARCH_R1_PROMPT.replace("{question}", make_item(0).question)}
    assert completion == {"role": "assistant", "content": (
        "<think>Two searches.</think>\n"
        "<search> Town 0 director </search>\n\n<information>Doc 1(Title: A) a</information>\n\n"
        "<search> Film 0 </search>\n\n<information>Doc 1(Title: B) b</information>\n\n"
        "<think>It is Film 0.</think>\n<answer> Film 0 </answer>")}


def test_searchr1_sft_wraps_free_text_in_think_and_keeps_tagged_text():
    assert thought("Found it. <answer>Film 0</answer>") == "<think>Found it.</think>\n<answer>Film 0</answer>"
    assert thought("<think>a</think> <answer>b</answer>") == "<think>a</think> <answer>b</answer>"


def test_searchr1_sft_cannot_express_other_tools():
    with pytest.raises(Unsupported, match="calls open"):
        assistant_text(PROMPT + [ChatMessage(role="assistant", content=None, tool_calls=[call("c", "open", '{"doc_id": "d"}')]),
                                 ChatMessage(role="tool", tool_call_id="c", content="(Title: D) d")])


def test_dpo_pairs_the_selected_teacher_trajectory_with_each_incorrect_one(settings, published, tmp_path):
    assert export_version(settings, "demo", "dpo", tmp_path / "dpo.jsonl").rows == 2
    first, second = read_jsonl(tmp_path / "dpo.jsonl")
    assert (first["chosen_id"], first["rejected_id"]) == ("item-0-chosen", "item-0-wrong")
    assert (second["chosen_id"], second["rejected_id"]) == ("item-1-malformed", "item-1-wrong")
    assert first["prompt"] == [{"role": "system", "content": "Use the tools."}, {"role": "user", "content": "Which film?"}]
    assert first["chosen"][0]["content"] is None and first["chosen"][0]["reasoning_content"] == "Two searches."
    assert [c["function"]["arguments"] for c in first["chosen"][0]["tool_calls"]] == ['{"query": "Town 0 director"}', '{"query": "Film 0", "k": 2}']
    assert first["rejected"] == [{"role": "assistant", "content": "<answer>Film 9</answer>"}]
    assert first["tools"] == [SEARCH, ANSWER] and first["item_id"] == "item-0"
    export_version(settings, "demo", "dpo", tmp_path / "dpo.parquet")
    row = pq.read_table(tmp_path / "dpo.parquet").to_pylist()[0]
    assert json.loads(row["tools"]) == [SEARCH, ANSWER] and row["chosen"][0]["tool_calls"][1]["id"] == "c1"


def test_dpo_without_pairs_says_why(settings, make_item, tmp_path):
    only = [rollout("item-0", "chosen", CHOSEN, selected=True), rollout("item-0", "silent", WRONG, reject_reason="no_answer")]
    publish_version(settings, VersionSpec(name="lonely", recipe="multihop"), {"items": [make_item(0)], "trajectories": only})
    with pytest.raises(NotFoundError, match="no preference pairs.*rejected as incorrect"):
        export_version(settings, "lonely", "dpo", tmp_path / "dpo.jsonl")
    assert not (tmp_path / "dpo.jsonl").exists()


@pytest.mark.parametrize("fmt", ["sft-chatml", "searchr1-sft", "dpo"])
def test_trajectory_exports_of_a_version_without_trajectories_say_what_to_do(settings, make_item, tmp_path, fmt):
    publish_version(settings, VersionSpec(name="bare", recipe="multihop"), {"items": [make_item(0)]})
    with pytest.raises(NotFoundError, match="no trajectories"):
        export_version(settings, "bare", fmt, tmp_path / "out.jsonl")

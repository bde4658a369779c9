import json

import datasets
import pyarrow.parquet as pq
import pytest

from synth.errors import ConfigError, NotFoundError
from synth.rewards import compute_score
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Trajectory
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version

SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the corpus.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}, "k": {"type": "integer"}}, "required": ["query"]},
    },
}
OPEN_TOOL = {
    "type": "function",
    "function": {"name": "open", "parameters": {"type": "object", "properties": {"doc_id": {"type": "string"}}}},
}


def trajectory(item_id: str, selected: bool = True) -> Trajectory:
    call = ToolCall(id="call_0", function=FunctionCall(name="search", arguments='{"query": "Town 0 director"}'))
    return Trajectory(
        id=f"traj-{item_id}-{selected}",
        item_id=item_id,
        role="teacher",
        model="teacher-model",
        tools=[SEARCH_TOOL, OPEN_TOOL],
        selected=selected,
        messages=[
            ChatMessage(role="system", content="You can search."),
            ChatMessage(role="user", content="Which film?"),
            ChatMessage(role="assistant", content=None, tool_calls=[call]),
            ChatMessage(role="tool", tool_call_id="call_0", content="Doc 1(Title: Film 0) ..."),
            ChatMessage(role="assistant", content="<answer>Film 0</answer>"),
        ],
    )


@pytest.fixture
def published(settings, make_item):
    items = [make_item(index, difficulty=["easy", "hard", "medium"][index]) for index in range(3)]
    tables = {"items": items, "trajectories": [trajectory("item-0"), trajectory("item-1", selected=False)]}
    return publish_version(settings, VersionSpec(name="demo", recipe="multihop"), tables)


def test_verl_export_matches_the_trainer_format_exactly(settings, published, tmp_path):
    out = tmp_path / "train.parquet"
    result = export_version(settings, "demo", "verl", out)
    assert result.rows == 3
    assert "custom_reward_function.path=" in result.notes[0]
    schema = pq.read_schema(out)
    # the five columns every verl row has, then agent_name: verl's multi-turn tool agent loop
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"]
    assert str(schema.field("prompt").type) == "list<element: struct<role: string, content: string>>"
    assert str(schema.field("reward_model").type) == "struct<style: string, ground_truth: struct<target: list<element: string>>>"
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train")
    row = rows[0]
    assert row["data_source"] == "synth_multihop"
    assert row["ability"] == "fact-reasoning"
    assert row["prompt"][0]["role"] == "user" and "Town 0" in row["prompt"][0]["content"]
    assert row["reward_model"] == {"style": "rule", "ground_truth": {"target": ["Film 0", "The Film 0"]}}
    assert row["extra_info"]["split"] == "train" and row["extra_info"]["index"] == 0
    assert row["extra_info"]["item_id"] == "item-0" and row["extra_info"]["dataset"] == "demo@1"
    assert row["agent_name"] == "tool_agent" and row["extra_info"]["need_tools_kwargs"] is True
    create_kwargs = {"ground_truth": {"target": ["Film 0", "The Film 0"]}, "question": row["extra_info"]["question"], "data_source": "synth_multihop"}
    assert row["extra_info"]["tools_kwargs"] == {"search": {"create_kwargs": create_kwargs}, "open": {"create_kwargs": create_kwargs}}
    solution = "I think... <answer> the film 0 </answer>"
    assert compute_score(row["data_source"], solution, row["reward_model"]["ground_truth"], row["extra_info"]) == 1.0


def test_verl_export_can_target_verls_builtin_scorer_and_filter_rows(settings, published, tmp_path):
    out = tmp_path / "hard.parquet"
    result = export_version(settings, "demo@1", "verl", out, data_source="searchR1_hotpotqa", where="difficulty in ('medium', 'hard')", split="test")
    assert result.rows == 2 and "built-in" in result.notes[0]
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train")
    assert [row["extra_info"]["difficulty"] for row in rows] == ["hard", "medium"]
    assert {row["data_source"] for row in rows} == {"searchR1_hotpotqa"}
    assert {row["extra_info"]["split"] for row in rows} == {"test"}


def test_searchr1_export_uses_a_scorer_name_searchr1_knows(settings, published, tmp_path):
    out = tmp_path / "searchr1.parquet"
    result = export_version(settings, "demo", "searchr1", out)
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train")
    assert rows[0]["data_source"] == "hotpotqa" and rows[0]["golden_answers"] == ["Film 0", "The Film 0"]
    assert "<search>" in rows[0]["prompt"][0]["content"] and "<information>" in rows[0]["prompt"][0]["content"]
    assert "qa_em" in result.notes[0]
    assert rows[0]["agent_name"] == "tool_agent"
    assert rows[0]["extra_info"]["tools_kwargs"]["search"]["create_kwargs"]["data_source"] == "hotpotqa"


def test_sft_export_loads_with_datasets_and_keeps_openai_quirks(settings, published, tmp_path):
    out = tmp_path / "sft.parquet"
    assert export_version(settings, "demo", "sft", out).rows == 1  # only the selected trajectory
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train")
    messages = rows[0]["messages"]
    assert [message["role"] for message in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert messages[2]["content"] is None
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == '{"query": "Town 0 director"}'
    assert messages[3]["tool_call_id"] == "call_0"
    assert json.loads(rows[0]["tools"]) == [SEARCH_TOOL, OPEN_TOOL]


def test_sft_jsonl_export_keeps_tools_as_a_list_and_null_content(settings, published, tmp_path):
    out = tmp_path / "sft.jsonl"
    export_version(settings, "demo", "sft", out)
    row = json.loads(out.read_text().splitlines()[0])
    assert row["tools"] == [SEARCH_TOOL, OPEN_TOOL]
    assert row["messages"][2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_0", "type": "function", "function": {"name": "search", "arguments": '{"query": "Town 0 director"}'}}]}
    rows = datasets.load_dataset("json", data_files=str(out), split="train")
    assert rows[0]["messages"][4]["content"] == "<answer>Film 0</answer>"


def test_sft_export_of_a_version_without_trajectories_says_what_to_do(settings, make_item, tmp_path):
    publish_version(settings, VersionSpec(name="bare", recipe="multihop"), {"items": [make_item(0)]})
    with pytest.raises(NotFoundError, match="no trajectories"):
        export_version(settings, "bare", "sft", tmp_path / "sft.parquet")


def test_hf_and_jsonl_exports(settings, published, tmp_path, make_item):
    export_version(settings, "demo", "hf", tmp_path / "hf")
    loaded = datasets.load_from_disk(str(tmp_path / "hf"))
    assert loaded["train"].num_rows == 3 and loaded["train"][1]["answer"] == "Film 1"
    export_version(settings, "demo", "jsonl", tmp_path / "items.jsonl")
    first = json.loads((tmp_path / "items.jsonl").read_text().splitlines()[0])
    assert first == make_item(0, difficulty="easy").model_dump(mode="json")


def test_export_refuses_to_overwrite_and_bad_suffixes(settings, published, tmp_path):
    out = tmp_path / "train.parquet"
    export_version(settings, "demo", "verl", out)
    with pytest.raises(ConfigError, match="--force"):
        export_version(settings, "demo", "verl", out)
    assert export_version(settings, "demo", "verl", out, force=True).rows == 3
    with pytest.raises(ConfigError, match="suffix"):
        export_version(settings, "demo", "verl", tmp_path / "train.csv")
    with pytest.raises(ConfigError, match="bad --where"):
        export_version(settings, "demo", "verl", tmp_path / "x.parquet", where="no_such_column = 1")
    assert not (tmp_path / "x.parquet").exists()

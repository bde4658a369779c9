import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
import yaml

from synth.contract.contracts import SYNTH
from synth.errors import ConfigError, NotFoundError, OutputError
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Trajectory
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version

SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search",
        "description": "Search the corpus.",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
            "required": ["query"],
        },
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


def load_by_path(path):
    """A module loaded the way verl loads custom_reward_function.path."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_verl_export_matches_the_trainer_format_and_ships_tools_and_reward(settings, published, tmp_path):
    out = tmp_path / "train.parquet"
    result = export_version(
        settings, "demo", "verl", out, validation_fraction=0, test_fraction=0
    )  # no items held out: all in train
    assert result.rows == 3
    command = next(note for note in result.notes if note.startswith("train: "))
    assert f"cd {tmp_path.resolve()} && MODEL=${{MODEL:?" in command and "python3 -m verl.trainer.main_ppo" in command
    for override in (
        "data.train_files=$PWD/train.parquet",
        "data.val_files=$PWD/train-val.parquet",  # nothing held out: verl validates on the train items
        "actor_rollout_ref.rollout.multi_turn.tool_config_path=$PWD/tool_config.yaml",
        " reward.custom_reward_function.path=$PWD/synth_contract.py",
        " reward.custom_reward_function.name=compute_score",
    ):
        assert override in command
    assert pq.read_table(tmp_path / "train-val.parquet").num_rows == 3
    schema = pq.read_schema(out)
    # the five columns every verl row has, then agent_name: verl's multi-turn tool agent loop
    assert schema.names == ["data_source", "prompt", "ability", "reward_model", "extra_info", "agent_name"]
    assert str(schema.field("prompt").type) == "list<element: struct<role: string, content: string>>"
    assert (
        str(schema.field("reward_model").type)
        == "struct<style: string, ground_truth: struct<target: list<element: string>>>"
    )
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train")
    row = rows[0]
    assert row["data_source"] == "synth_multihop"
    assert row["ability"] == "fact-reasoning"
    question = row["extra_info"]["question"]
    assert row["prompt"] == [
        {"role": "system", "content": SYNTH.system_prompt},
        {"role": "user", "content": f"Question: {question}"},
    ]
    assert row["reward_model"] == {"style": "rule", "ground_truth": {"target": ["Film 0", "The Film 0"]}}
    assert row["extra_info"]["split"] == "train" and row["extra_info"]["index"] == 0
    assert row["extra_info"]["item_id"] == "item-0" and row["extra_info"]["dataset"] == "demo@1"
    assert row["agent_name"] == "tool_agent" and row["extra_info"]["need_tools_kwargs"] is True
    create_kwargs = {
        "ground_truth": {"target": ["Film 0", "The Film 0"]},
        "question": question,
        "data_source": "synth_multihop",
    }
    assert row["extra_info"]["tools_kwargs"] == {
        "search": {"create_kwargs": create_kwargs},
        "open": {"create_kwargs": create_kwargs},
    }

    config = yaml.safe_load((tmp_path / "tool_config.yaml").read_text())
    assert [tool["class_name"] for tool in config["tools"]] == [
        "synth_verl_tools.SearchTool",
        "synth_verl_tools.OpenTool",
    ]
    assert [tool["tool_schema"] for tool in config["tools"]] == SYNTH.schemas  # what the SFT rows offer
    assert config["tools"][0]["config"] == {
        "type": "native",
        "retrieval_service_url": "http://127.0.0.1:8000",
        "timeout": 30,
        "topk": 3,
        "observation": "synth",
    }
    assert (tmp_path / "synth_verl_tools.py").read_text().startswith('"""verl tools for data exported by synth')
    reward = load_by_path(tmp_path / "synth_contract.py")
    truth = row["reward_model"]["ground_truth"]
    assert (
        reward.compute_score(row["data_source"], "I think... <answer> the film 0 </answer>", truth, row["extra_info"])
        == 1.0
    )
    call = '<tool_call>\n{"name": "answer", "arguments": {"answer": "Film 0"}}\n</tool_call>'
    assert reward.compute_score(row["data_source"], call, truth) == 1.0
    assert reward.compute_score(row["data_source"], "<answer>Film 9</answer>", truth) == 0.0


def test_verl_export_can_target_verls_builtin_scorer_and_filter_rows(settings, published, tmp_path):
    out = tmp_path / "hard.parquet"
    result = export_version(
        settings,
        "demo@1",
        "verl",
        out,
        data_source="searchR1_hotpotqa",
        where="difficulty in ('medium', 'hard')",
        split="all",
        validation_fraction=0,
        test_fraction=0,
    )
    assert result.rows == 2 and "built-in" in result.notes[2] and "custom_reward_function" not in result.notes[-1]
    assert "no validation item" in result.notes[1]
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train")
    assert [row["extra_info"]["difficulty"] for row in rows] == ["hard", "medium"]
    assert {row["data_source"] for row in rows} == {"searchR1_hotpotqa"}
    assert {row["extra_info"]["split"] for row in rows} == {"train"}  # each item's own split


def test_verl_reads_parquet_only_and_an_empty_export_is_an_error(settings, published, tmp_path):
    with pytest.raises(ConfigError, match="verl reads Parquet"):
        export_version(settings, "demo", "verl", tmp_path / "train.jsonl")
    with pytest.raises(ConfigError, match="not an http"):
        export_version(settings, "demo", "verl", tmp_path / "train.parquet", retrieval_url="localhost:8000")
    with pytest.raises(NotFoundError, match="no items in the train split matching --where"):
        export_version(settings, "demo", "verl", tmp_path / "none.parquet", where="difficulty = 'trivial'")
    assert not (tmp_path / "none.parquet").exists() and not (tmp_path / "tool_config.yaml").exists()


def test_verl_export_for_the_answer_tool_contract_ships_the_answer_tool(settings, published, tmp_path):
    export_version(settings, "demo", "verl", tmp_path / "train.parquet", contract="synth-answer-tool")
    config = yaml.safe_load((tmp_path / "tool_config.yaml").read_text())
    assert [tool["class_name"].split(".")[1] for tool in config["tools"]] == ["SearchTool", "OpenTool", "AnswerTool"]
    row = datasets.load_dataset("parquet", data_files=str(tmp_path / "train.parquet"), split="train")[0]
    assert set(row["extra_info"]["tools_kwargs"]) == {"search", "open", "answer"}
    with pytest.raises(ConfigError, match="other content"):  # the folder's helper files belong to another contract now
        export_version(settings, "demo", "verl", tmp_path / "test.parquet")


def test_verl_export_defaults_to_the_contract_the_versions_agents_ran_under(settings, make_item, tmp_path):
    spec = VersionSpec(
        name="answering", recipe="multihop", config={"contract": "synth-answer-tool", "panel": {"retrieval_k": 5}}
    )
    publish_version(settings, spec, {"items": [make_item(0)]})
    export_version(settings, "answering", "verl", tmp_path / "train.parquet")
    config = yaml.safe_load((tmp_path / "tool_config.yaml").read_text())
    assert [tool["tool_schema"]["function"]["name"] for tool in config["tools"]] == ["search", "open", "answer"]
    assert config["tools"][0]["config"]["topk"] == 5  # the search k the data was made with


def test_searchr1_export_uses_a_scorer_name_searchr1_knows(settings, published, tmp_path):
    out = tmp_path / "searchr1.parquet"
    result = export_version(settings, "demo", "searchr1", out)
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train")
    assert rows[0]["data_source"] == "hotpotqa" and rows[0]["golden_answers"] == ["Film 0", "The Film 0"]
    prompt = rows[0]["prompt"][0]["content"]
    assert "<search>" in prompt and "<information>" in prompt
    assert prompt.count("<answer>") == 1  # Search-R1's qa_em needs exactly one example tag in the prompt
    assert "qa_em" in result.notes[0] and not any(note.startswith("warning") for note in result.notes)
    assert rows[0]["agent_name"] == "tool_agent"
    assert rows[0]["extra_info"]["tools_kwargs"]["search"]["create_kwargs"]["data_source"] == "hotpotqa"
    with pytest.raises(ConfigError, match="Search-R1's own protocol"):
        export_version(settings, "demo", "searchr1", tmp_path / "other.parquet", contract="synth")


@pytest.mark.parametrize(
    "template, warning",
    [("Q: {question}", "no <answer>"), ("<answer>a</answer> or <answer>b</answer> {question}", "2 <answer>")],
)
def test_searchr1_export_warns_about_templates_its_scorer_misreads(settings, published, tmp_path, template, warning):
    (tmp_path / "template.txt").write_text(template)
    result = export_version(
        settings, "demo", "searchr1", tmp_path / "out.parquet", prompt_template=tmp_path / "template.txt"
    )
    assert any(note.startswith("warning") and warning in note for note in result.notes)


def test_sft_export_loads_with_datasets_with_arguments_as_objects(settings, published, tmp_path):
    out = tmp_path / "sft.parquet"
    assert export_version(settings, "demo", "sft", out).rows == 1  # only the selected trajectory
    rows = datasets.load_dataset("parquet", data_files=str(out), split="train")
    messages = rows[0]["messages"]
    assert [message["role"] for message in messages] == ["system", "user", "assistant", "tool", "assistant"]
    # the contract's prompt, with the item's question
    assert (
        messages[0]["content"] == SYNTH.system_prompt
        and messages[1]["content"] == "Question: Which film was directed by the person born in Town 0?"
    )
    assert messages[2]["content"] is None
    assert messages[2]["tool_calls"][0]["function"]["arguments"] == {"query": "Town 0 director"}
    assert messages[3]["tool_call_id"] == "call_0"
    assert rows[0]["tools"] == SYNTH.schemas


def test_sft_jsonl_export_keeps_null_content_and_can_write_string_arguments(settings, published, tmp_path):
    out = tmp_path / "sft.jsonl"
    export_version(settings, "demo", "sft", out, arguments="string")
    row = json.loads(out.read_text().splitlines()[0])
    assert row["tools"] == SYNTH.schemas
    assert row["messages"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "search", "arguments": '{"query": "Town 0 director"}'},
            }
        ],
    }
    rows = datasets.load_dataset("json", data_files=str(out), split="train")
    assert rows[0]["messages"][4]["content"] == "<answer>Film 0</answer>"


def test_sft_export_of_a_version_without_trajectories_says_what_to_do(settings, make_item, tmp_path):
    publish_version(settings, VersionSpec(name="bare", recipe="multihop"), {"items": [make_item(0)]})
    with pytest.raises(NotFoundError, match="no trajectories"):
        export_version(settings, "bare", "sft", tmp_path / "sft.parquet")


def test_hf_and_jsonl_exports(settings, published, tmp_path, make_item):
    result = export_version(settings, "demo", "hf", tmp_path / "hf")
    loaded = datasets.load_from_disk(str(tmp_path / "hf"))
    assert loaded["train"].num_rows == 3 and loaded["train"][1]["answer"] == "Film 1"
    export_version(settings, "demo", "jsonl", tmp_path / "items.jsonl")
    first = json.loads((tmp_path / "items.jsonl").read_text().splitlines()[0])
    assert first == make_item(0, difficulty="easy").model_dump(mode="json")
    # the two disagree on metadata's shape, and the hf export says so: a JSON string there, an object here
    row = next(row for row in loaded["train"] if row["id"] == first["id"])
    assert json.loads(row["metadata"]) == first["metadata"]
    assert any(note.startswith("metadata: JSON text in every row") for note in result.notes)


def test_export_refuses_to_overwrite_and_bad_suffixes(settings, published, tmp_path):
    out = tmp_path / "train.parquet"
    export_version(settings, "demo", "verl", out)
    with pytest.raises(ConfigError, match="--force"):
        export_version(settings, "demo", "verl", out)
    assert export_version(settings, "demo", "verl", out, force=True, validation_fraction=0, test_fraction=0).rows == 3
    with pytest.raises(ConfigError, match="suffix"):
        export_version(settings, "demo", "verl", tmp_path / "train.csv")
    with pytest.raises(ConfigError, match="bad --where"):
        export_version(settings, "demo", "verl", tmp_path / "x.parquet", where="no_such_column = 1")
    assert not (tmp_path / "x.parquet").exists()


def test_an_hf_export_that_fails_on_a_full_disk_leaves_nothing_behind(settings, published, tmp_path, monkeypatch):
    import errno

    def full_disk(self, path, **kwargs):
        Path(path).mkdir(parents=True)
        (Path(path) / "data-00000-of-00001.arrow").write_bytes(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(datasets.DatasetDict, "save_to_disk", full_disk)
    with pytest.raises(OutputError, match="No space left on device.*nothing was written"):
        export_version(settings, "demo", "hf", tmp_path / "hf")
    assert list(tmp_path.iterdir()) == []  # no .hf.tmp/ left behind

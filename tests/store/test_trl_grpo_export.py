"""The verl export also carries what TRL's GRPOTrainer needs: `synth_trl_grpo.py` turns the tool
config into typed, documented functions (whose schemas, as transformers derives them for TRL, are
the contract's), calls `synth search serve` with them, and scores TRL-shaped completions with the
contract's reward. The trainer itself runs in examples/check_trl_grpo_export.py (TRL's GRPOTrainer
does not import in this environment: its vision imports need a torchvision built for this torch)."""

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from synth.contract.contracts import SYNTH_ANSWER_TOOL
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))

from search_server import search_server  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def load_script(folder: Path):
    spec = importlib.util.spec_from_file_location("synth_trl_grpo", folder / "synth_trl_grpo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def exported(settings, make_item, tmp_path):
    items = [make_item(index) for index in range(4)]
    publish_version(settings, VersionSpec(name="rl", recipe="multihop"), {"items": items})
    out = tmp_path / "rl" / "train.parquet"
    result = export_version(settings, "rl", "verl", out, contract="synth-answer-tool")
    return out.parent, result


def test_the_export_prints_the_trl_command_and_ships_the_script(exported):
    folder, result = exported
    command = result.notes[-1]
    assert f"cd {folder.resolve()} && python3 synth_trl_grpo.py --model_name_or_path $" in command
    assert (folder / "synth_trl_grpo.py").is_file()


def test_tools_have_the_contracts_schemas_and_reach_the_retriever(exported, tmp_path, monkeypatch):
    from transformers.utils import get_json_schema  # what TRL turns a tool function into

    folder, _ = exported
    corpus = FIXTURES / "corpus" / "mini.jsonl"
    with search_server(tmp_path / "home", "--corpus", str(corpus)) as url:
        monkeypatch.setenv("SYNTH_RETRIEVAL_URL", url.removesuffix("/retrieve"))
        tools = {tool.__name__: tool for tool in load_script(folder).make_tools()}
        assert list(tools) == ["search", "open", "answer"]
        for schema in SYNTH_ANSWER_TOOL.schemas:  # what the SFT rows offer, as TRL renders the functions
            derived = get_json_schema(tools[schema["function"]["name"]])
            assert derived["function"]["name"] == schema["function"]["name"]
            assert (
                derived["function"]["parameters"]["properties"].keys()
                == schema["function"]["parameters"]["properties"].keys()
            )
        found = tools["search"]("Grey Harbour director")
        assert found.startswith("Doc 1(Title: ") and "[id: " in found
        doc_id = found.split("[id: ", 1)[1].split("]", 1)[0]
        assert tools["open"](doc_id).startswith("(Title: ")
        assert tools["answer"]("x") == "Answer recorded."
    assert tools["search"]("anything").startswith("error: the search service failed")  # server gone: an observation


def test_the_reward_scores_trl_completions_right_and_wrong(exported):
    folder, _ = exported
    script = load_script(folder)
    truth = {"style": "rule", "ground_truth": {"target": ["Film 0", "The Film 0"]}}

    def answered(answer: str) -> list[dict]:
        call = {"type": "function", "function": {"name": "answer", "arguments": json.dumps({"answer": answer})}}
        return [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"type": "function", "function": {"name": "search", "arguments": {"query": "q"}}}],
            },
            {"role": "tool", "name": "search", "content": "Doc 1(Title: Film 0) <answer>Film 0</answer>"},
            {"role": "assistant", "content": "", "tool_calls": [call]},
        ]

    completions = [
        answered("film 0"),
        answered("Film 9"),
        [{"role": "assistant", "content": "<answer>The Film 0</answer>"}],
    ]
    scores = script.synth_reward(
        prompts=[[]] * 3, completions=completions, reward_model=[truth] * 3, data_source=["synth_multihop"] * 3
    )
    assert scores == [1.0, 0.0, 1.0]  # a tool result that happens to hold an answer tag scores nothing


def test_the_environment_resets_on_an_item_its_methods_are_the_tools_and_it_scores_its_own_item(
    exported, tmp_path, monkeypatch
):
    """GRPOTrainer's environment_factory: TRL lists the class's public functions as the tools (as
    transformers derives their schemas: the contract's), makes one instance per rollout, calls
    `reset(**row)` with the row, and here each rollout's environment scores its own completion."""
    import inspect

    import pyarrow.parquet as pq
    from transformers.utils import get_json_schema

    folder, _ = exported
    script = load_script(folder)
    environment_class = script.make_environment()
    public = [name for name, _ in inspect.getmembers(environment_class, inspect.isfunction) if not name.startswith("_")]
    assert sorted(public) == ["answer", "open", "reset", "search"]  # reset is TRL's; the rest become tools
    rows = pq.read_table(folder / "train.parquet").to_pylist()
    first, second = environment_class(), environment_class()
    assert first.reset(**rows[0]) is None and second.reset(**rows[1]) is None
    for schema in SYNTH_ANSWER_TOOL.schemas:  # the bound methods, as TRL renders them into the prompt
        name, wanted = schema["function"]["name"], schema["function"]["parameters"]
        derived = get_json_schema(getattr(first, name))["function"]
        assert derived["name"] == name and derived["parameters"]["required"] == wanted["required"]
        assert derived["parameters"]["properties"].keys() == wanted["properties"].keys()
    corpus = FIXTURES / "corpus" / "mini.jsonl"
    with search_server(tmp_path / "home", "--corpus", str(corpus)) as url:
        monkeypatch.setenv("SYNTH_RETRIEVAL_URL", url.removesuffix("/retrieve"))
        first = script.make_environment()()  # the URL is read when the tools are made
        first.reset(**rows[0])
        assert first.search(query="Grey Harbour director").startswith("Doc 1(Title: ")
        assert first.answer(answer="x") == "Answer recorded." and first.calls == ["search", "answer"]
    answers = [row["reward_model"]["ground_truth"]["target"][0] for row in rows[:2]]
    completions = [[{"role": "assistant", "content": f"<answer>{answers[0]}</answer>"}]] * 2
    scores = script.synth_reward(
        prompts=[[]] * 2,
        completions=completions,
        reward_model=[rows[0]["reward_model"]] * 2,
        data_source=[rows[0]["data_source"]] * 2,
        environments=[first, second],
    )
    assert scores == [1.0, 0.0]  # the second rollout's environment was reset on another item
    with pytest.raises(ValueError, match="before reset"):
        environment_class()._score(completions[0])

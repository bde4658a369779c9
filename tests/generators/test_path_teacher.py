"""The path teacher through the recipe a user runs (`distill.teacher=path` on the bundled graph):
each kept demonstration really shows every hop's evidence, rejected ones say which hop missed,
exports can take or leave them, and TRL's SFTTrainer trains on them as on a model teacher's."""

import importlib.util
import json
from pathlib import Path

import datasets
import pytest

from synth.schemas import Trajectory
from synth.store.catalog import Catalog
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version
from synth.store.reader import iter_records


@pytest.fixture
def walked(settings, run_cli):
    code, _, err = run_cli(
        "generate",
        "--recipe",
        "multihop",
        "--n",
        "16",
        "--seed",
        "3",
        "--param",
        "panel.enabled=false",
        "--param",
        "distill.enabled=true",
        "--param",
        "distill.teacher=path",
        "--quiet",
    )
    assert code == 0, err
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve("multihop")
    items = {item.id: item for item in iter_records(settings, version, "items")}
    return version, items, list(iter_records(settings, version, "trajectories"))


def test_kept_demonstrations_show_every_hops_evidence_and_rejected_ones_name_the_missed_hop(walked):
    version, items, trajectories = walked
    assert len(trajectories) == len(items) and version.summary["distill"]["teacher"] == "path-teacher"
    kept = [t for t in trajectories if t.reject_reason is None]
    assert kept and all(t.selected for t in kept)
    for trajectory in trajectories:
        item = items[trajectory.item_id]
        assert trajectory.model == "path-teacher" and trajectory.metadata["procedural"] is True
        if trajectory.reject_reason is not None:
            assert trajectory.reject_reason == "evidence_not_surfaced" and "missed_hop" in trajectory.metadata
            continue
        observations = [m.content or "" for m in trajectory.messages if m.role == "tool"]
        for hop in item.path:
            assert any(hop.evidence_doc_id in text for text in observations)  # the tools showed it
        searches = [c for m in trajectory.messages for c in m.tool_calls or [] if c.function.name == "search"]
        assert len(searches) >= item.hops and trajectory.num_tool_calls >= item.hops
        assert trajectory.messages[-1].content.endswith(f"<answer>{item.answer}</answer>")
        assert trajectory.final_answer == item.answer and trajectory.correct


def test_exports_include_exclude_or_take_only_the_demonstrations(settings, walked, tmp_path):
    version, items, trajectories = walked
    kept = [t for t in trajectories if t.selected]
    model_run = kept[0].model_copy(update={"id": "model-teacher-run", "model": "served-teacher"})
    mixed = publish_version(
        settings,
        VersionSpec(name="mixed", recipe="multihop"),
        {"items": list(items.values()), "trajectories": [*trajectories, model_run]},
    )
    counts = {}
    for choice in ("include", "exclude", "only"):
        out = tmp_path / f"{choice}.jsonl"
        counts[choice] = export_version(settings, mixed.ref, "sft", out, split="all", procedural=choice).rows
    assert counts == {"include": len(kept) + 1, "exclude": 1, "only": len(kept)}


def test_trl_trains_on_the_demonstrations_as_on_a_model_teachers(settings, walked, tmp_path):
    spec = importlib.util.find_spec("trl")
    if spec is None:
        pytest.skip("needs trl (the test extra installs it)")
    import torch
    import transformers
    from trl import SFTConfig, SFTTrainer

    from synth.llm.embedded import smollm2_tokenizer

    version, _, _ = walked
    export_version(settings, version.ref, "sft", tmp_path / "sft.jsonl", split="all", procedural="only")
    tokenizer = smollm2_tokenizer(tmp_path / "models")
    tokenizer.chat_template = (Path(spec.origin).parent / "chat_templates" / "qwen2_5_training.jinja").read_text()
    model = transformers.Qwen2ForCausalLM(
        transformers.Qwen2Config(
            vocab_size=len(tokenizer),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            num_key_value_heads=1,
            max_position_embeddings=8192,
        )
    )
    dataset = datasets.load_dataset("json", data_files=str(tmp_path / "sft.jsonl"), split="train")
    arguments = SFTConfig(
        output_dir=str(tmp_path / "out"),
        max_steps=1,
        per_device_train_batch_size=2,
        report_to=[],
        assistant_only_loss=True,
        use_cpu=True,
        save_strategy="no",
        max_length=8192,
        dataset_num_proc=None,
    )
    trainer = SFTTrainer(model=model, args=arguments, train_dataset=dataset, processing_class=tokenizer)
    example = trainer.train_dataset[0]
    trained = tokenizer.decode([t for t, label in zip(example["input_ids"], example["labels"]) if label != -100])
    assert '"name": "search", "arguments": {"query": ' in trained and "<answer>" in trained
    assert "<tool_response>" not in trained  # observations are context, not targets
    first = json.loads((tmp_path / "sft.jsonl").open().readline())
    assert first["messages"][0]["role"] == "system" and [t["function"]["name"] for t in first["tools"]] == [
        "search",
        "open",
    ]
    assert torch.isfinite(torch.tensor(trainer.train().training_loss))


def test_an_item_without_a_recorded_path_gets_no_demonstration(make_item, tmp_path):
    import asyncio

    from synth.generators.path_teacher import PathTeacher
    from synth.kg.graph import KnowledgeGraph
    from synth.schemas import Document
    from synth.search.corpus import Corpus
    from synth.search.retrieval import BM25Retriever
    from synth.search.tools import SearchTools

    corpus = Corpus([Document(id="d1", title="Town 0", text="Town 0 is a town.")], name="t")
    tools = SearchTools(corpus, BM25Retriever(corpus, tmp_path / "index", log=lambda line: None))
    graph = KnowledgeGraph.from_triples([], {}, {}, "empty")
    (walk,) = asyncio.run(PathTeacher(graph, tools).rollouts([make_item(0, path=[])]))
    assert isinstance(walk, Trajectory) and walk.final_answer is None and walk.finish_reason == "evidence_not_surfaced"

"""Long searches and context policies (synth.search.context_policy), over HTTP: a loopback agent
searches 118 times and the answer is in the 4th result. Without a policy its context outgrows
`context_tokens` and the run is lost; with `archive` (old results as stubs it reopens) and with
`summarize` (the same model's notes) it ends with the right answer, the stored trace holds every
turn in full, each turn records what it saw, and the SFT export renders through TRL's Qwen3
training template with assistant-only loss."""

import asyncio
import json
import sys
from pathlib import Path

import pytest
from long_search_server import LongSearchServer

from synth.errors import ConfigError
from synth.generators.distill import DistillConfig, Teacher
from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.openai_http import OpenAICompatibleBackend
from synth.llm.reasoning import ReasoningPolicy
from synth.schemas import Document
from synth.search.budget import AgentBudget
from synth.search.corpus import Corpus
from synth.search.retrieval import BM25Retriever
from synth.search.tools import SearchTools
from synth.solving.rejection import judge_rollouts
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "store"))
from test_sft_chat_template import trl_template  # noqa: E402

TURNS = 120
CODE = "ORCHID-7"
FILLER = "This record lists shipments, dates and the names of clerks who signed for them in the harbour office."


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    documents = [
        Document(
            id=f"d{turn}",
            title=f"Record r{turn}",
            text=f"Record r{turn}. {FILLER} {FILLER}" + (f" The vault code is {CODE}." if turn == 3 else ""),
        )
        for turn in range(TURNS)
    ]
    corpus = Corpus(documents, name="records")
    index = tmp_path_factory.mktemp("index")
    return SearchTools(corpus, BM25Retriever(corpus, index, log=lambda line: None), default_k=1)


def run(policy: str, make_item, tools, tmp_path):
    server = LongSearchServer(TURNS).start_in_thread()
    client = LLMClient(
        OpenAICompatibleBackend("long", [server.url], reasoning=ReasoningPolicy(mode="off")),
        cache=ResponseCache(tmp_path / f"{policy}.sqlite"),
    )
    budget = AgentBudget(
        protocol="native", max_turns=TURNS, turn_tokens=64, context_tokens=3000, context=policy, summarize_at=1500
    )
    config = DistillConfig(enabled=True, n=1, agent=budget, checks=[])  # 118 searches: long by design
    item = make_item(0, question="What is the vault code?", answer=CODE, aliases=[], path=[], hops=1)
    teacher = Teacher(config, client, tools)

    async def go():
        try:
            return await teacher.rollouts([item])
        finally:
            await client.aclose()

    try:
        [rollout] = asyncio.run(go())
    finally:
        server.stop()
    [judged] = judge_rollouts([item], [rollout], config)
    return item, judged, server


def test_without_a_policy_the_long_search_outgrows_its_context(make_item, tools, tmp_path):
    _, trajectory, _ = run("none", make_item, tools, tmp_path)
    assert trajectory.finish_reason == "token_budget_exhausted" and trajectory.reject_reason == "token_budget_exhausted"


@pytest.mark.parametrize("policy", ["archive", "summarize"])
def test_archive_and_summarize_reach_the_answer_and_keep_the_whole_trace(
    policy, make_item, tools, tmp_path, settings, tokenizer
):
    item, trajectory, server = run(policy, make_item, tools, tmp_path)
    assert trajectory.final_answer == CODE and trajectory.correct and trajectory.reject_reason is None
    searches = [c for m in trajectory.messages for c in m.tool_calls or [] if c.function.name == "search"]
    assert len(searches) == TURNS - 2  # every search is stored
    results = [m.content for m in trajectory.messages if m.role == "tool"]
    assert all(not text.startswith("[archived") for text in results)  # stored in full, never as stubs
    assert any(f"The vault code is {CODE}." in text for text in results)
    context = trajectory.metadata["context"]
    assert context["policy"] == policy and len(context["views"]) == sum(
        m.role == "assistant" for m in trajectory.messages
    )  # what each turn saw
    if policy == "archive":
        assert len(context["views"][-1]["archived"]) > 100
        opened = [c for m in trajectory.messages for c in m.tool_calls or [] if c.function.name == "open"]
        assert opened and json.loads(opened[0].function.arguments)["doc_id"].startswith("d3")  # reopened its note
    else:
        assert server.summaries >= 1 and context["summaries"] and CODE in context["summaries"][-1]
        assert context["views"][-1]["summarized_before"] > 100

    version = publish_version(
        settings, VersionSpec(name=f"long-{policy}", recipe="multihop"), {"items": [item], "trajectories": [trajectory]}
    )
    out = tmp_path / "sft.jsonl"
    export_version(settings, version.ref, "sft", out, split="all")
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["step_labels"] == trajectory.step_labels and len(row["step_labels"]) == trajectory.num_tool_calls
    trained = trained_text(tokenizer, row)
    assert f"<answer>{CODE}</answer>" in trained and trained.count('"name": "search"') == TURNS - 2
    if policy == "summarize":  # as the model saw it: a row per summary segment, each rendered and trained on
        seen = tmp_path / "seen.jsonl"
        export_version(settings, version.ref, "sft", seen, split="all", context="seen")
        rows = [json.loads(line) for line in seen.read_text().splitlines()]
        assert len(rows) == len(context["summaries"]) + 1
        for number, row in enumerate(rows):
            users = [m["content"] for m in row["messages"] if m["role"] == "user"]
            assert (len(users) == 2 and users[1].startswith("Summary of your research")) == (number > 0)
            assert row["messages"][-1]["role"] == "assistant"
            assert trained_text(tokenizer, row)  # rendered, with tokens inside the assistant mask
        assert f"<answer>{CODE}</answer>" in rows[-1]["messages"][-1]["content"]
        assert [label for row in rows for label in row["step_labels"]] == trajectory.step_labels  # split by segment
        shown = sum(m["role"] == "assistant" for row in rows for m in row["messages"])
        assert shown == sum(m.role == "assistant" for m in trajectory.messages)  # every turn trained once
    else:
        with pytest.raises(ConfigError, match="whose view changes every turn"):
            export_version(settings, version.ref, "sft", tmp_path / "seen.jsonl", split="all", context="seen")


def trained_text(tokenizer, row: dict) -> str:
    """What TRL's Qwen3 training template trains on in an SFT row: the tokens in its assistant mask."""
    rendered = tokenizer.apply_chat_template(
        row["messages"],
        tools=row["tools"],
        chat_template=trl_template("qwen3_training.jinja"),
        tokenize=True,
        return_dict=True,
        return_assistant_tokens_mask=True,
    )
    return tokenizer.decode([t for t, on in zip(rendered["input_ids"], rendered["assistant_masks"]) if on])


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory):
    from synth.llm.embedded import smollm2_tokenizer

    return smollm2_tokenizer(tmp_path_factory.mktemp("models"))

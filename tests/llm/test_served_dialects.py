"""Served reasoning models, end to end over HTTP: a loopback server plays a competent search agent
(right with a known probability per hop count) in every real server's response shape, and synth's
teacher runs against it in every agent protocol.

What must hold in every dialect x protocol: the rollouts the rejection sampler accepts are exactly
the ones the model got right (so their share matches p within sampling error), the reasoning is
stored on every assistant turn where the server sent it (and nowhere else), and tool-call ids are
unique within every trajectory.
"""

import asyncio
import json
import math
import sys
from pathlib import Path

import pytest
from competent_server import DIALECTS, REASONING_DIALECTS, CompetentServer, _draw

from synth.generators.distill import DistillConfig, Teacher
from synth.hashing import item_seed
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

P = {2: 0.9, 3: 0.6, 4: 0.3}
"""The model's chance of answering right, by hop count."""
N = 2
"""Rollouts per item."""
PROTOCOLS = ("native", "tags", "json")


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    documents = [
        Document(id=f"d{index}", title=f"Person {index}", text=f"Person {index} was born in Town {index}.")
        for index in range(12)
    ]
    documents += [  # what the searches find: each question's answer, so a right answer is a grounded one
        Document(id=f"a{number}", title=f"Thing {number}", text=f"Code T{number} is {answer}.")
        for hops in P
        for index in range(8)
        for number, answer in [(hops * 100 + index, f"Film {hops * 100 + index}")]
    ]
    corpus = Corpus(documents, name="t")
    index = tmp_path_factory.mktemp("index")
    return SearchTools(corpus, BM25Retriever(corpus, index, log=lambda line: None), default_k=2)


def questions(make_item, per_hops: int = 8):
    return [
        make_item(
            hops * 100 + index, hops=hops, path=[], question=f"Which {hops}-hop thing is code T{hops * 100 + index}?"
        )
        for hops in P
        for index in range(per_hops)
    ]


def client_for(server: CompetentServer, tmp_path, **policy) -> LLMClient:
    backend = OpenAICompatibleBackend("competent", [server.url], reasoning=ReasoningPolicy(**policy))
    return LLMClient(backend, cache=ResponseCache(tmp_path / "cache.sqlite"))


def distill(items, client: LLMClient, tools, protocol: str, **config):
    teacher = Teacher(DistillConfig(enabled=True, n=N, agent=AgentBudget(protocol=protocol), **config), client, tools)

    async def go():
        try:
            return await teacher.rollouts(items)
        finally:
            await client.aclose()

    return judge_rollouts(items, asyncio.run(go()), teacher_config(config), 0.8)


def teacher_config(config) -> DistillConfig:
    return DistillConfig(enabled=True, n=N, **config)


def model_is_right(item, sample: int) -> bool:
    """What the server decided for this rollout (it draws once per rollout seed)."""
    return _draw(" ".join(item.question.split()), item_seed(item, f"distill:{sample}"), "search") < P[item.hops]


@pytest.fixture
def served(request):
    server = CompetentServer(request.param, p=P).start_in_thread()
    yield server
    server.stop()


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("served", DIALECTS, indirect=True)
def test_every_dialect_and_protocol_keeps_reasoning_and_accepts_what_the_model_got_right(
    served, protocol, make_item, tools, tmp_path
):
    items = questions(make_item)
    served.learn(items)
    trajectories = distill(items, client_for(served, tmp_path), tools, protocol)
    by_item = {item.id: item for item in items}

    accepted = {(t.item_id, t.sample_index) for t in trajectories if t.reject_reason in (None, "")}
    right = {(item.id, sample) for item in items for sample in range(N) if model_is_right(item, sample)}
    assert accepted == right, {t.reject_reason for t in trajectories}
    expected = sum(P[item.hops] for item in items) * N
    spread = math.sqrt(sum(P[item.hops] * (1 - P[item.hops]) for item in items) * N)
    assert abs(len(accepted) - expected) <= 3 * spread + 1
    wrong = [t for t in trajectories if (t.item_id, t.sample_index) not in right]
    assert {t.reject_reason for t in wrong} == {"incorrect"}  # answered in every case, never cut off

    assistant = [m for t in trajectories for m in t.messages if m.role == "assistant"]
    twins = sum(served.hedges.values())  # a hedged request is answered more than once and stored once
    assert len(assistant) == served.replies["all"] - twins - 1  # every reply is a stored turn (one probe aside)
    with_reasoning = [m for m in assistant if m.reasoning_content]
    if served.dialect in REASONING_DIALECTS:
        assert len(with_reasoning) == len(assistant) == served.replies["reasoning"] - twins - 1
        assert all("I should check each clue" in m.reasoning_content for m in with_reasoning)
    else:
        assert with_reasoning == []
    for message in assistant:  # the reply is what is left once reasoning and parser markup are taken out
        assert not any(mark in (message.content or "") for mark in ("<think>", "</think>", "<|channel|>"))
        assert message.content is None or message.content == message.content.strip()
    for trajectory in trajectories:
        ids = [call.id for message in trajectory.messages for call in message.tool_calls or []]
        assert len(ids) == len(set(ids)) == trajectory.num_tool_calls + (ids != [] and _answer_call(trajectory))
        assert trajectory.num_tool_calls == by_item[trajectory.item_id].hops
    sent_back = [m for r in served.requests for m in r["messages"] if m["role"] == "assistant"]
    if protocol == "native" and served.dialect in REASONING_DIALECTS:  # (the other protocols show a demonstration)
        assert sent_back and all(m.get("reasoning_content") for m in sent_back)  # earlier turns' reasoning goes back
    if protocol == "native":  # the model searches twice at once on longer chains: parallel calls, each answered
        parallel = [m for t in trajectories for m in t.messages if len(m.tool_calls or []) == 2]
        assert len(parallel) == sum(item.hops >= 3 for item in items) * N
    if served.dialect in ("vllm", "vllm_legacy", "openai"):  # servers that count reasoning tokens
        assert all(t.metadata["reasoning_tokens"] > 0 for t in trajectories)


def _answer_call(trajectory) -> int:
    return sum(call.function.name == "answer" for m in trajectory.messages for call in m.tool_calls or [])


SFT_FAMILY = ("sft", "sft-chatml", "sharegpt", "searchr1-sft", "dpo")


@pytest.mark.parametrize("served", REASONING_DIALECTS, indirect=True)
def test_reasoning_reaches_every_sft_format_and_drop_removes_it(served, make_item, tools, tmp_path, settings):
    items = questions(make_item, per_hops=4)
    served.learn(items)
    trajectories = distill(items, client_for(served, tmp_path), tools, "native")
    version = publish_version(
        settings, VersionSpec(name="distilled", recipe="multihop"), {"items": items, "trajectories": trajectories}
    )
    reasoning = next(m.reasoning_content for t in trajectories for m in t.messages if m.reasoning_content)
    marker = reasoning.splitlines()[1]  # one line of the model's thinking, as each format must carry it
    for fmt in SFT_FAMILY:
        for choice in ("keep", "drop"):
            out = tmp_path / f"{fmt}-{choice}.jsonl"
            result = export_version(settings, version.ref, fmt, out, reasoning=choice)
            assert result.rows > 0, fmt
            text = out.read_text()
            assert (marker in text) == (choice == "keep"), (fmt, choice)
            if fmt in ("sft-chatml", "sharegpt", "searchr1-sft") and choice == "keep":
                assert "<think>" in text
            if fmt in ("sft", "dpo") and choice == "keep":
                assert '"reasoning_content"' in text


@pytest.mark.parametrize("served", ["vllm"], indirect=True)
def test_trls_qwen3_training_template_renders_the_exported_reasoning(served, make_item, tools, tmp_path, settings):
    """The consumer's own entry point: TRL's Qwen3 training template turns each turn's
    `reasoning_content` into the <think> block the model is trained to write."""
    from test_sft_chat_template import trl_template  # noqa: I001 (tests/store is not a package)

    from synth.llm.embedded import smollm2_tokenizer

    items = questions(make_item, per_hops=2)
    served.learn(items)
    trajectories = distill(items, client_for(served, tmp_path), tools, "native")
    version = publish_version(
        settings, VersionSpec(name="distilled", recipe="multihop"), {"items": items, "trajectories": trajectories}
    )
    export_version(settings, version.ref, "sft", tmp_path / "sft.jsonl")
    tokenizer = smollm2_tokenizer(tmp_path / "models")
    rows = [json.loads(line) for line in (tmp_path / "sft.jsonl").read_text().splitlines()]
    for row in rows:
        text = tokenizer.apply_chat_template(
            row["messages"], tools=row["tools"], chat_template=trl_template("qwen3_training.jinja"), tokenize=False
        )
        thoughts = [m["reasoning_content"] for m in row["messages"] if m.get("reasoning_content")]
        assert thoughts and len(thoughts) == sum(m["role"] == "assistant" for m in row["messages"])
        for thought in thoughts:
            assert f"<think>\n{thought.strip()}\n</think>" in text


def test_a_probe_the_server_refuses_leaves_requests_as_built(tmp_path):
    """A 400 for the probe (a request the server will not take) says nothing about reasoning and is
    not the server failing: the model is taken not to reason and every request still goes out."""
    from fault_server import FaultServer

    from synth.llm.types import ChatRequest, ChatResponse, SamplingParams

    server = FaultServer().start_in_thread()
    server.inject("400")
    backend = OpenAICompatibleBackend("smol", [server.url], reasoning=ReasoningPolicy())
    client = LLMClient(backend, cache=ResponseCache(tmp_path / "cache.sqlite"))
    request = ChatRequest(
        messages=[{"role": "user", "content": "hi"}], sampling=SamplingParams(max_tokens=8, stop=["\n"])
    )

    async def go():
        try:
            return await client.complete([request])
        finally:
            await client.aclose()

    try:
        [answer] = asyncio.run(go())
    finally:
        server.stop()
    assert isinstance(answer, ChatResponse) and answer.text == "reply to: hi"
    assert server.requests[0]["max_tokens"] == 256  # the probe: short, so it fits any served context
    assert server.requests[1]["max_tokens"] == 8 and server.requests[1]["stop"] == ["\n"]  # sent as built

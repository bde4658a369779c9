"""The solver panel on a scripted model and a four-document corpus: conditions, agent turns, records, cache reuse."""

import asyncio

import pytest

from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.fake import ScriptedBackend
from synth.schemas import Document, Hop
from synth.search.agent import DEMONSTRATION
from synth.search.budget import PANEL_AGENT, AgentBudget
from synth.search.corpus import Corpus
from synth.search.retrieval import BM25Retriever
from synth.search.tools import SearchTools
from synth.solving.panel import Panel, PanelConfig, SolverSpec
from synth.solving.solvers import ModelSolver, RetrievalReader, parse_answer

DOCUMENTS = [
    Document(id="d1", title="Alice Ames", text="Alice Ames was born in Springfield. Alice Ames directed First Light."),
    Document(id="d2", title="First Light", text="First Light is a drama film directed by Alice Ames."),
    Document(id="d3", title="Bob Burns", text="Bob Burns was born in Shelbyville."),
    Document(id="d4", title="Second Wind", text="Second Wind is a comedy directed by Bob Burns."),
]


def scripted(request):
    """Closed-book: a wrong guess; gold evidence: right; search: one search, then the answer,
    except that the first turn of the second sample rambles (a malformed turn)."""
    if request.stage == "solver_closed_book":
        return "<answer>Second Wind"
    if request.stage == "solver_gold_evidence":
        return "<answer>First Light"
    start = max(
        index for index, message in enumerate(request.messages) if str(message["content"]).startswith("Question:")
    )
    own = request.messages[start + 1 :]  # after the worked demonstration, if any
    turn = sum(message["role"] == "assistant" for message in own)
    if turn == 0 and (request.sampling.seed // 1000) % 2 == 1:  # the agent seeds turns as rollout seed * 1000 + turn
        return "Let me think about it."
    if not any(str(message["content"]).startswith("<tool_response>") for message in own):
        return '<tool_call>{"name": "search", "arguments": {"query": "film directed by Alice Ames"}}'
    return "<answer>First Light"


@pytest.fixture
def world(tmp_path):
    corpus = Corpus(DOCUMENTS, name="t")
    return SearchTools(corpus, BM25Retriever(corpus, tmp_path / "index", log=lambda line: None), default_k=2)


def items(make_item, count=2):
    path = [
        Hop(head="/p/a", relation="born_in", tail="/c/s", direction="inverse", evidence_doc_id="d1"),
        Hop(head="/p/a", relation="directed", tail="/f/1", evidence_doc_id="d2"),
    ]
    return [
        make_item(
            index,
            question=f"Which film was directed by a person born in Springfield (variant {index})?",
            answer="First Light",
            aliases=[],
            path=path,
            evidence_doc_ids=["d1", "d2"],
        )
        for index in range(count)
    ]


def turns(count: int) -> AgentBudget:
    return PANEL_AGENT.embedded.model_copy(update={"max_turns": count})


def panel(world, backend, cache):
    client = LLMClient(backend, cache=cache)
    evidence = lambda item: [world.open(doc_id) for doc_id in item.evidence_doc_ids]  # noqa: E731
    model = ModelSolver("small", client, world, evidence, ("closed_book", "search", "gold_evidence"), turns(3))
    return Panel([(model, 2), (RetrievalReader("reader", world), 1)], world), client


def test_every_solver_attempts_every_item_k_times_per_condition(make_item, world, tmp_path):
    backend = ScriptedBackend(default=scripted)
    run, _ = panel(world, backend, ResponseCache(tmp_path / "cache.sqlite"))
    attempts, trajectories = asyncio.run(run.attempt(items(make_item)))
    per_item = {(a.solver, a.condition, a.sample_index): a for a in attempts if a.item_id == "item-0"}
    assert len(attempts) == 2 * (3 * 2 + 1)
    assert [per_item[("small", "closed_book", i)].correct for i in (0, 1)] == [False, False]
    assert all(per_item[("small", "gold_evidence", i)].match == "exact" for i in (0, 1))
    assert all(
        per_item[("small", "search", i)].correct and per_item[("small", "search", i)].num_tool_calls == 1
        for i in (0, 1)
    )
    reader = per_item[("reader", "search", 0)]
    # the baseline names the best-ranked document the question does not mention: here the director, wrongly
    assert reader.model == "baseline:bm25-reader" and reader.answer == "Alice Ames" and not reader.correct
    # gold evidence prompts hold exactly the item's evidence documents
    gold = next(request for request in backend.requests if request.stage == "solver_gold_evidence")
    assert "[id: d1]" in gold.messages[-1]["content"] and "[id: d2]" in gold.messages[-1]["content"]
    assert "[id: d3]" not in gold.messages[-1]["content"]


def test_search_attempts_keep_their_trajectories(make_item, world, tmp_path):
    backend = ScriptedBackend(default=scripted)
    run, _ = panel(world, backend, ResponseCache(tmp_path / "cache.sqlite"))
    attempts, trajectories = asyncio.run(run.attempt(items(make_item, 1)))
    assert len(trajectories) == 2 and all(t.role == "solver" and t.correct for t in trajectories)
    # the worked demonstration goes to the model but is no part of any stored trajectory
    search_requests = [request for request in backend.requests if request.stage == "solver_search"]
    assert all(request.messages[1 : 1 + len(DEMONSTRATION)] == DEMONSTRATION for request in search_requests)
    assert not any("Grey Harbour" in (message.content or "") for t in trajectories for message in t.messages)
    by_sample = {t.metadata["malformed_turns"]: t for t in trajectories}
    clean = by_sample[0]
    assert [m.role for m in clean.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert clean.messages[2].tool_calls[0].function.name == "search" and "Doc 1(Title:" in clean.messages[3].content
    corrected = by_sample[1]  # the rambling turn got a corrective observation, then the agent recovered
    assert [m.role for m in corrected.messages][:4] == ["system", "user", "assistant", "user"]
    assert corrected.final_answer == "First Light"
    search_attempts = [a for a in attempts if a.condition == "search" and a.solver == "small"]
    assert {a.trajectory_id for a in search_attempts} == {t.id for t in trajectories}


def test_a_rerun_reuses_every_completed_model_call(make_item, world, tmp_path):
    cache_path = tmp_path / "cache.sqlite"
    first_backend = ScriptedBackend(default=scripted)
    run, _ = panel(world, first_backend, ResponseCache(cache_path))
    first, _ = asyncio.run(run.attempt(items(make_item, 1)))  # as if the run died after the first item
    assert first_backend.requests
    second_backend = ScriptedBackend(default=scripted)
    run, client = panel(world, second_backend, ResponseCache(cache_path))
    second, _ = asyncio.run(run.attempt(items(make_item, 2)))
    sent = {request.messages[-1]["content"] for request in second_backend.requests}
    assert sent and all("variant 1" in text or "tool_response" in text or "error:" in text for text in sent)
    assert len(second_backend.requests) == len(first_backend.requests)  # only the second item's calls
    assert client.ledger.summary()["llm_cache_hits"] == len(first_backend.requests)
    assert [a for a in second if a.item_id == "item-0"] == first


def test_answers_are_read_from_tags_or_the_first_line():
    assert parse_answer("<answer> First  Light </answer>") == "First Light"
    assert parse_answer("<answer>First Light") == "First Light"  # the stop string cut the closing tag
    assert parse_answer("Answer: First Light.\nBecause ...") == "First Light"
    assert parse_answer("") is None


def test_panel_config_names_what_is_wrong():
    with pytest.raises(ValueError, match="at least two solvers"):
        PanelConfig(solvers=[SolverSpec(name="only", model="embedded")])
    with pytest.raises(ValueError, match="exactly one of `model`"):
        SolverSpec(name="x")
    with pytest.raises(ValueError, match="only runs the search condition"):
        SolverSpec(name="r", baseline="bm25_reader")


def test_a_judge_model_accepts_other_names_of_the_answer_and_nothing_else(make_item, world, tmp_path):
    import json

    from synth.solving.answer_judge import AnswerJudge

    def solver_reply(request):  # closed-book: an abbreviation; search: a wrong film; gold: right
        if request.stage == "solver_closed_book":
            return "<answer>FL (film)"
        if request.stage == "solver_gold_evidence":
            return "<answer>First Light"
        return "<answer>Second Wind"

    def judge_reply(request):
        candidate = request.messages[1]["content"].rsplit("Candidate answer: ", 1)[1]
        return json.dumps({"same": candidate.startswith("FL")})

    judge_backend = ScriptedBackend(default=judge_reply, name="judge")
    client = LLMClient(ScriptedBackend(default=solver_reply), cache=ResponseCache(tmp_path / "cache.sqlite"))
    evidence = lambda item: [world.open(doc_id) for doc_id in item.evidence_doc_ids]  # noqa: E731
    solver = ModelSolver("small", client, world, evidence, ("closed_book", "search", "gold_evidence"), turns(1))
    run = Panel([(solver, 1)], world, judge=AnswerJudge(LLMClient(judge_backend)))
    attempts, trajectories = asyncio.run(run.attempt(items(make_item, 1)))
    by_condition = {attempt.condition: attempt for attempt in attempts}
    assert (by_condition["closed_book"].correct, by_condition["closed_book"].match) == (True, "judge")
    assert (by_condition["search"].correct, by_condition["search"].match) == (False, "none")
    assert by_condition["gold_evidence"].match == "exact"
    assert len(judge_backend.requests) == 2  # only the two unmatched answers were judged
    assert [t.correct for t in trajectories] == [False]

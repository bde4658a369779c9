"""Self-play parts on a scripted model: the proposer's items and trajectories, every gate, what the
RAG judge sees, the difficulty band and the depth curriculum."""

import asyncio
import json
import re
from pathlib import Path

import pytest

from synth.filters.band import BandConfig, BandFilter
from synth.filters.base import FilterChain
from synth.filters.dedup import ExactDedupFilter
from synth.filters.format import FormatFilter
from synth.filters.leakage import LeakageFilter
from synth.filters.proposer_searches import ProposerSearchFilter
from synth.filters.rag_verify import RAGConfig, RAGVerifier
from synth.generators.curriculum import CurriculumConfig, next_searches
from synth.generators.selfplay import Proposer, ProposerConfig, Target, TargetConfig, eligible_targets, sample_targets
from synth.llm.client import LLMClient
from synth.llm.fake import ScriptedBackend
from synth.llm.types import Completion
from synth.schemas import DifficultyLabel, FunctionCall, PassRate, ToolCall
from synth.search.corpus import Corpus
from synth.search.retrieval import BM25Retriever
from synth.search.tools import SearchTools

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "mini.jsonl"
TARGET = Target("Grey Harbour", "doc00", None, "Grey Harbour is a 1998 drama film directed by Mira Olsen.")


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    corpus = Corpus.from_jsonl(CORPUS)
    return SearchTools(
        corpus, BM25Retriever(corpus, tmp_path_factory.mktemp("index"), log=lambda line: None), default_k=2
    )


def search(query):
    return f'<tool_call>{{"name": "search", "arguments": {{"query": "{query}"}}}}'


def propose(tools, replies, searches=2, native=False, config=ProposerConfig(demonstrations=False, protocol="tags")):
    backend = ScriptedBackend(replies, native_tools=native)
    proposer = Proposer(config, LLMClient(backend), tools, seed=0, corpus_name="jsonl:mini.jsonl")
    [proposal] = asyncio.run(proposer.propose([TARGET], searches, round_index=0))
    return proposal, backend


def test_a_proposal_becomes_an_item_with_its_searches_documents_and_trajectory(tools):
    proposal, backend = propose(
        tools,
        [
            search("Mira Olsen director"),
            search("Kelvik port town film"),
            "<question>Which drama film was shot in a port town by a director born there?",
        ],
    )
    item = proposal.outcome
    assert item.question == "Which drama film was shot in a port town by a director born there?"
    assert item.answer == "Grey Harbour" and item.recipe == "selfplay" and item.hops == 2
    assert item.metadata["proposer"]["queries"] == ["Mira Olsen director", "Kelvik port town film"]
    assert item.evidence_doc_ids == item.metadata["proposer"]["retrieved"] and "doc01" in item.evidence_doc_ids
    trajectory = proposal.trajectory
    assert trajectory.role == "proposer" and trajectory.item_id == item.id and trajectory.num_tool_calls == 2
    assert [m.role for m in trajectory.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
    ]
    assert json.loads(trajectory.messages[2].tool_calls[0].function.arguments) == {"query": "Mira Olsen director"}
    # the task names the target, the requested searches and (by default) the target's own document
    task = backend.requests[0].messages[1]["content"]
    assert "Target answer: Grey Harbour" in task and "Make 2 different searches" in task and "Mira Olsen" in task
    assert backend.requests[0].sampling.stop == ["</tool_call>", "</question>"]


def test_a_proposer_that_never_writes_a_question_is_rejected_with_its_trajectory_kept(tools):
    proposal, _ = propose(tools, [search("Mira Olsen")] * 10)
    assert proposal.outcome.stage == "proposal" and proposal.outcome.reason == "turn_budget_exhausted"
    assert (
        proposal.trajectory.final_answer is None and proposal.trajectory.num_tool_calls == 4
    )  # 2 searches + 2 extra turns


def test_the_native_protocol_proposes_with_the_propose_tool(tools):
    def call(name, arguments):
        return Completion(
            text=None,
            tool_calls=[ToolCall(id="c", function=FunctionCall(name=name, arguments=json.dumps(arguments)))],
            finish_reason="tool_calls",
        )

    proposal, backend = propose(
        tools,
        [
            call("search", {"query": "Mira Olsen"}),
            call("search", {"query": "Kelvik"}),
            call("propose", {"question": "Question: Which film did a Kelvik-born director make?"}),
        ],
        native=True,
        config=ProposerConfig(protocol="auto"),
    )
    assert proposal.outcome.question == "Which film did a Kelvik-born director make?"
    assert [tool["function"]["name"] for tool in backend.requests[0].tools] == ["search", "open", "propose"]


def test_the_json_protocol_constrains_every_reply_to_a_call_and_the_last_turn_to_proposing(tools):
    def call(name, **arguments):
        return json.dumps({"name": name, "arguments": arguments})

    proposal, backend = propose(
        tools,
        [
            call("search", query="Mira Olsen director"),
            "not json at all",
            call("search", query="Kelvik"),
            call("propose", question="Which film did a director born in Kelvik shoot there?"),
        ],
        config=ProposerConfig(protocol="auto"),
    )  # no tool channel: auto means json
    assert proposal.outcome.question == "Which film did a director born in Kelvik shoot there?"
    assert proposal.trajectory.metadata["malformed_calls"] == 1 and proposal.trajectory.metadata["protocol"] == "json"
    names = [
        [option["properties"]["name"]["const"] for option in request.json_schema["anyOf"]]
        for request in backend.requests
    ]
    # 2 searches asked (propose closed until 2 calls ran; the malformed turn ran none), then free, the last turn must
    # propose
    assert names == [["search", "open"]] * 3 + [["propose"]]
    assert (
        backend.requests[0].messages[0]["content"].endswith("Tools: search (query), open (doc_id), propose (question).")
    )
    demo = backend.requests[0].messages[1 : 1 + 6]
    assert json.loads(demo[1]["content"]) == {"name": "search", "arguments": {"query": "Mira Olsen director"}}
    assert json.loads(demo[5]["content"])["name"] == "propose"
    # earlier calls come back to the model as the JSON it wrote; the stored record is OpenAI-shaped
    assert json.loads(backend.requests[1].messages[-2]["content"]) == {
        "name": "search",
        "arguments": {"query": "Mira Olsen director"},
    }
    assert proposal.trajectory.messages[2].tool_calls[0].function.name == "search"


def item_from(tools, queries, question="Which drama film was shot in a port town by a director born there?"):
    replies = [search(query) for query in queries] + [f"<question>{question}"]
    return propose(tools, replies, searches=len(queries))[0].outcome


def test_each_gate_drops_what_it_should(tools):
    good = item_from(tools, ["Mira Olsen director", "Kelvik port town"])
    leaked_in_question = item_from(tools, ["Mira Olsen", "Kelvik"], "Which film is Grey Harbour, shot in Kelvik?")
    leaked_in_query = item_from(
        tools, ["Grey Harbour director", "Kelvik"], "Which film by a Kelvik-born director was shot in her town?"
    )
    one_search = item_from(
        tools, ["Mira Olsen", "mira  olsen"], "Which film did the director born in Kelvik make first?"
    )
    not_a_question = item_from(tools, ["Mira Olsen", "Kelvik"], "The film shot in Kelvik by a local director.")
    duplicate = item_from(tools, ["Kelvik lighthouse", "Mira Olsen films"])  # same question as `good`, other searches
    chain = FilterChain(
        [FormatFilter(), LeakageFilter(lambda entity: entity), ProposerSearchFilter(2), ExactDedupFilter()]
    )
    kept = chain.run([good, leaked_in_question, leaked_in_query, one_search, not_a_question, duplicate])
    assert kept == [good]
    reasons = {verdict.item_id: verdict.reason for verdict in chain.verdicts if not verdict.kept}
    assert reasons == {
        leaked_in_question.id: "answer_in_question",
        leaked_in_query.id: "answer_in_search_query",
        one_search.id: "too_few_searches",
        not_a_question.id: "not_a_question",
        duplicate.id: "duplicate_construction",
    }


def shown_ids(request) -> list[str]:
    return re.findall(r"\[id: ([^\]]+)\]", request.messages[-1]["content"])


def rag_items(tools, make_item):
    return [
        make_item(0, answer="Grey Harbour", aliases=[], evidence_doc_ids=["doc01", "doc02"]),
        make_item(1, answer="Ostrand", aliases=[], evidence_doc_ids=["doc04", "doc05"]),
        make_item(2, answer="Winter Ledger", aliases=[], evidence_doc_ids=["doc10", "doc11", "doc01"]),
    ]


def test_the_rag_judge_sees_only_the_proposers_documents_and_the_declared_distractors(tools, make_item):
    items = rag_items(tools, make_item)
    backend = ScriptedBackend(default="Grey Harbour")
    verifier = RAGVerifier(RAGConfig(distractors=2, demonstrations=False), LLMClient(backend), tools)
    verdicts = verifier.apply(items)
    assert len(backend.requests) == 3
    for item, verdict, request in zip(items, verdicts, backend.requests):
        details = verdict.details
        assert details["documents"] == item.evidence_doc_ids
        assert len(details["distractors"]) == 2 and not set(details["distractors"]) & set(item.evidence_doc_ids)
        others = {doc for other in items if other is not item for doc in other.evidence_doc_ids}
        assert set(details["distractors"]) <= others  # drawn from other proposals of the batch
        assert shown_ids(request) == details["shown"] and sorted(details["shown"]) == sorted(
            item.evidence_doc_ids + details["distractors"]
        )
        assert item.question in request.messages[-1]["content"]
    assert [(v.kept, v.reason) for v in verdicts] == [
        (True, "rag_verified"),
        (False, "rag_unverified"),
        (False, "rag_unverified"),
    ]
    assert verdicts[1].details["answers"] == ["Grey Harbour"]

    plain = ScriptedBackend(default="Ostrand")
    RAGVerifier(RAGConfig(distractors=0, demonstrations=False), LLMClient(plain), tools).apply(items)
    assert [sorted(shown_ids(request)) for request in plain.requests] == [
        sorted(item.evidence_doc_ids) for item in items
    ]


def test_the_rag_judge_needs_half_of_its_samples_right_and_evidence_to_read(tools, make_item):
    items = rag_items(tools, make_item)[:1] + [
        make_item(5, answer="Kelvik", aliases=[], evidence_doc_ids=["no-such-doc"])
    ]
    backend = ScriptedBackend(["Grey Harbour", "Mira Olsen", "Kelvik Lighthouse"])
    verdicts = RAGVerifier(RAGConfig(samples=3, distractors=0, demonstrations=False), LLMClient(backend), tools).apply(
        items
    )
    assert verdicts[0].reason == "rag_unverified" and verdicts[0].details["correct"] == 1  # 1 of 3 is not half
    assert verdicts[1].reason == "no_evidence" and len(backend.requests) == 1


def label(item_id, correct, attempts=4):
    return DifficultyLabel(
        item_id=item_id,
        label="medium",
        thresholds="v1",
        pass_rates=[PassRate(solver="a", condition="search", attempts=attempts, correct=correct)],
    )


def test_the_band_keeps_items_the_solver_sometimes_solves(make_item):
    items = [make_item(index) for index in range(3)]
    labels = {
        items[0].id: label(items[0].id, 0),
        items[1].id: label(items[1].id, 2),
        items[2].id: label(items[2].id, 4),
    }
    chain = FilterChain([BandFilter(BandConfig(), labels)])
    assert chain.run(items) == [items[1]]
    assert [v.reason for v in chain.verdicts] == ["too_hard", "in_band", "too_easy"]
    assert FilterChain([BandFilter(BandConfig(low=0.0, high=1.0, inclusive=True), labels)]).run(items) == items
    with pytest.raises(ValueError, match="keep nothing"):
        BandConfig(low=0.5, high=0.5)


def test_the_curriculum_asks_for_deeper_searches_when_solved_too_often_and_shallower_when_never():
    config = CurriculumConfig(start_searches=3, min_searches=2, max_searches=4)
    assert next_searches(config, 3, 1.0).searches == 4 and next_searches(config, 3, 1.0).decision == "deeper"
    assert next_searches(config, 4, 1.0).decision == "keep"  # at max_searches
    assert next_searches(config, 3, 0.0).searches == 2 and next_searches(config, 3, 0.0).decision == "shallower"
    assert next_searches(config, 2, 0.0).decision == "keep"  # at min_searches
    assert next_searches(config, 3, 0.5).searches == 3
    assert next_searches(config, 3, None).reason.startswith("no question reached the solver")


def test_targets_are_short_titles_sampled_in_disjoint_reproducible_slices():
    targets = eligible_targets(Corpus.from_jsonl(CORPUS), TargetConfig(max_answer_words=2))
    assert "Norrvik Film School" not in {t.answer for t in targets} and "Grey Harbour" in {t.answer for t in targets}
    first, second = sample_targets(targets, 7, 0, 5), sample_targets(targets, 7, 5, 5)
    assert not {t.doc_id for t in first} & {t.doc_id for t in second}
    assert sample_targets(targets, 7, 0, 5) == first

"""Teacher rollouts on a scripted model: every rejection reason, the best-of-n rule, both tool-call
protocols, guided runs with the hint removed, and cache reuse on a rerun."""

import asyncio

import pytest

from synth.contract import get_contract
from synth.generators.distill import DistillConfig, Teacher
from synth.generators.guidance import leaks, path_guidance
from synth.hashing import item_seed
from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.fake import ScriptedBackend
from synth.llm.types import Completion, LLMFailure
from synth.schemas import ChatMessage, Document, FunctionCall, Hop, ToolCall, Trajectory
from synth.search.corpus import Corpus
from synth.search.retrieval import BM25Retriever
from synth.search.tools import SearchTools
from synth.solving.rejection import distill_statistics, judge_rollouts, reject_reason, unanswered_calls

DOCUMENTS = [
    Document(id="d1", title="Alice Ames", text="Alice Ames was born in Springfield. Alice Ames directed First Light."),
    Document(id="d2", title="First Light", text="First Light is a drama film directed by Alice Ames."),
    Document(id="d3", title="Bob Burns", text="Bob Burns was born in Shelbyville."),
]
NAMES = {"/p/alice": "Alice Ames", "/c/springfield": "Springfield", "/f/light": "First Light"}
SEARCH = '<tool_call>{"name": "search", "arguments": {"query": "film director born in Springfield"}}'
SEARCH_AGAIN = '<tool_call>{"name": "search", "arguments": {"query": "First Light film"}}'


@pytest.fixture
def tools(tmp_path):
    corpus = Corpus(DOCUMENTS, name="t")
    return SearchTools(corpus, BM25Retriever(corpus, tmp_path / "index", log=lambda line: None), default_k=2)


def item(make_item, index=0):
    path = [
        Hop(head="/p/alice", relation="born_in", tail="/c/springfield", direction="inverse", evidence_doc_id="d1"),
        Hop(head="/p/alice", relation="directed", tail="/f/light", evidence_doc_id="d2"),
    ]
    return make_item(
        index,
        question=f"Which film was directed by someone born in Springfield (case {index})?",
        answer="First Light",
        aliases=[],
        path=path,
        evidence_doc_ids=["d1", "d2"],
    )


def turn_of(request) -> int:
    return request.sampling.seed % 1000


def scripted_by_sample(plans: dict[int, list]):
    """Reply per (rollout seed -> list of replies by turn); seeds are looked up from the request."""

    def reply(request):
        plan = plans[request.sampling.seed // 1000]
        return plan[min(turn_of(request), len(plan) - 1)]

    return reply


def seeds(items, n):
    return [[item_seed(it, f"distill:{index}") for index in range(n)] for it in items]


def run(teacher, items):
    return asyncio.run(teacher.rollouts(items))


def test_best_of_n_keeps_the_correct_run_with_fewest_calls_and_pairs_wrong_ones(make_item, tools):
    items = [item(make_item)]
    [s] = seeds(items, 4)
    plans = {
        s[0]: [SEARCH, SEARCH_AGAIN, "<answer>First Light"],  # correct, 2 calls
        s[1]: [SEARCH, "I found it. <answer>First Light"],  # correct, 1 call: the best
        s[2]: [SEARCH, "<answer>Second Wind"],  # well-formed but wrong: a DPO negative
        s[3]: ["<answer>First Light"],  # correct without searching
    }
    config = DistillConfig(enabled=True, n=4, demonstrations=False)
    teacher = Teacher(config, LLMClient(ScriptedBackend(default=scripted_by_sample(plans))), tools)
    judged = judge_rollouts(items, run(teacher, items), config, f1_threshold=0.8)
    by_sample = {t.sample_index: t for t in judged}
    assert [by_sample[i].reject_reason for i in range(4)] == [None, None, "incorrect", "too_few_tool_calls"]
    assert [by_sample[i].selected for i in range(4)] == [False, True, False, False]
    assert by_sample[1].num_tool_calls == 1 and by_sample[1].final_answer == "First Light" and by_sample[1].correct
    assert by_sample[3].correct and not by_sample[3].selected
    statistics = distill_statistics(judged, 1, config)
    assert (
        statistics["accept_rate"] == 0.5 and statistics["dpo_pairs"] == 1 and statistics["items_with_trajectory"] == 1
    )
    assert statistics["rejected"] == {"incorrect": 1, "too_few_tool_calls": 1}


def test_fewest_tokens_rule_and_ties_by_sample_index(make_item, tools):
    items = [item(make_item)]
    [s] = seeds(items, 3)
    long_thought = "Let me reason about this carefully before I answer. " * 5
    plans = {
        s[0]: [SEARCH, SEARCH_AGAIN, "<answer>First Light"],
        s[1]: [SEARCH, long_thought + "<answer>First Light"],
        s[2]: [SEARCH, SEARCH_AGAIN, "<answer>First Light"],
    }
    backend = ScriptedBackend(default=scripted_by_sample(plans))
    tokens = DistillConfig(enabled=True, n=3, demonstrations=False, select="fewest_tokens")
    judged = judge_rollouts(items, run(Teacher(tokens, LLMClient(backend), tools), items), tokens, 0.8)
    assert [t.sample_index for t in judged if t.selected] == [0]  # ties with sample 2 on calls and tokens
    calls = tokens.model_copy(update={"select": "fewest_tool_calls"})
    judged = judge_rollouts(items, run(Teacher(calls, LLMClient(backend), tools), items), calls, 0.8)
    assert [t.sample_index for t in judged if t.selected] == [1]


def test_every_way_a_rollout_can_fail_has_its_reason(make_item, tools):
    items = [item(make_item)]
    [s] = seeds(items, 5)
    rambling = "Hmm, I am not sure what to do."
    plans = {
        s[0]: [rambling],  # never calls, never answers
        s[1]: [rambling, SEARCH, "<answer>First Light"],  # one corrected malformed turn
        s[2]: [LLMFailure(reason="http_500", detail="server error")],
        s[3]: [Completion(text="The film is possibly the one that", finish_reason="length")],
        s[4]: [SEARCH, " ".join(["word"] * 400) + SEARCH_AGAIN],  # outgrows the context budget
    }
    config = DistillConfig(enabled=True, n=5, max_turns=3, demonstrations=False, max_context_tokens=300)
    teacher = Teacher(config, LLMClient(ScriptedBackend(default=scripted_by_sample(plans))), tools)
    judged = {t.sample_index: t for t in judge_rollouts(items, run(teacher, items), config, 0.8)}
    assert judged[0].reject_reason == "turn_budget_exhausted" and judged[0].metadata["malformed_calls"] == 3
    assert judged[1].reject_reason == "malformed_tool_call" and judged[1].correct
    assert judged[1].messages[3] == ChatMessage(role="user", content=judged[1].messages[3].content)  # the correction
    assert "error: reply with exactly one <tool_call>" in judged[1].messages[3].content
    assert judged[2].reject_reason == "model_failure" and judged[2].finish_reason == "http_500"
    assert judged[3].reject_reason == "truncated"
    assert judged[4].reject_reason == "token_budget_exhausted"
    assert not any(t.selected for t in judged.values())
    lenient = config.model_copy(update={"max_malformed": 1})
    assert reject_reason(judged[1], items[0], lenient, 0.8) is None


def test_calls_without_a_tool_message_and_runs_without_an_answer_are_rejected(make_item):
    config = DistillConfig(enabled=True)
    search = ToolCall(id="call_0", function=FunctionCall(name="search", arguments='{"query": "a"}'))
    again = ToolCall(id="call_0", function=FunctionCall(name="search", arguments='{"query": "b"}'))  # the id repeats
    messages = [
        ChatMessage(role="system", content="s"),
        ChatMessage(role="user", content="Question: q"),
        ChatMessage(role="assistant", content=None, tool_calls=[search]),
        ChatMessage(role="tool", tool_call_id="call_0", content="r"),
        ChatMessage(role="assistant", content=None, tool_calls=[again]),
    ]
    base = dict(id="t", item_id="item-0", role="teacher", model="m", num_tool_calls=2, finish_reason="answered")
    unanswered = Trajectory(messages=messages, final_answer="First Light", **base)
    assert unanswered_calls(messages) == 1
    assert reject_reason(unanswered, item(make_item), config, 0.8) == "unanswered_tool_call"
    answered = messages + [
        ChatMessage(role="tool", tool_call_id="call_0", content="r2"),
        ChatMessage(role="assistant", content="no idea"),
    ]
    assert unanswered_calls(answered) == 0
    assert (
        reject_reason(Trajectory(messages=answered, final_answer=None, **base), item(make_item), config, 0.8)
        == "no_answer"
    )


@pytest.mark.parametrize("contract", ["synth", "synth-answer-tool"])
def test_native_protocol_uses_the_tool_channel_and_finishes_as_the_contract_says(make_item, tools, contract):
    items = [item(make_item)]
    tools.contract = get_contract(contract)
    by_call = contract == "synth-answer-tool"
    offered = ["search", "open", "answer"] if by_call else ["search", "open"]

    def native(request):
        assert [tool["function"]["name"] for tool in request.tools] == offered
        assert ("call `answer`" in request.messages[0]["content"]) == by_call  # the contract's system prompt
        turn = sum(message["role"] == "assistant" for message in request.messages)
        if turn == 0:  # two calls at once; the backend numbers ids per reply, so they repeat across turns
            return Completion(
                text=None,
                finish_reason="tool_calls",
                tool_calls=[
                    ToolCall(
                        id="call_0", function=FunctionCall(name="search", arguments='{"query": "born in Springfield"}')
                    ),
                    ToolCall(id="call_1", function=FunctionCall(name="open", arguments='{"doc_id": "d2"}')),
                ],
            )
        assert request.messages[-1]["role"] == "tool" and request.messages[2]["content"] is None
        if by_call:
            return Completion(
                text="It is the film.",
                finish_reason="tool_calls",
                tool_calls=[
                    ToolCall(id="call_0", function=FunctionCall(name="answer", arguments='{"answer": "First Light"}'))
                ],
            )
        return Completion(text="It is the film. <answer>First Light</answer>", finish_reason="stop")

    config = DistillConfig(enabled=True, n=1)
    teacher = Teacher(config, LLMClient(ScriptedBackend(default=native, native_tools=True)), tools)
    assert teacher.protocol == "native"
    [trajectory] = judge_rollouts(items, run(teacher, items), config, 0.8)
    assert (
        trajectory.selected and trajectory.final_answer == "First Light" and trajectory.num_tool_calls == 2
    )  # the answer call is no search
    assert "[id: d2]" in trajectory.messages[4].content
    assert trajectory.metadata["contract"] == contract and trajectory.metadata["search_k"] == 2
    assert [tool["function"]["name"] for tool in trajectory.tools] == offered
    if by_call:
        assert [m.role for m in trajectory.messages] == [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "assistant",
            "tool",
        ]
        # the repeated id is renamed, so every tool message answers exactly one call of the trajectory
        assert trajectory.messages[5].tool_calls[0].id == trajectory.messages[6].tool_call_id == "call_5_0"
        assert trajectory.messages[6].content == "Answer recorded."
        ids = [call.id for message in trajectory.messages for call in message.tool_calls or []]
        assert len(ids) == len(set(ids)) == 3
    else:
        assert [m.role for m in trajectory.messages] == ["system", "user", "assistant", "tool", "tool", "assistant"]
        assert trajectory.messages[-1].content == "It is the film. <answer>First Light</answer>"
    assert Teacher(config, LLMClient(ScriptedBackend()), tools).protocol == "tags"  # auto: no tool channel


def test_a_native_teacher_that_answers_without_searching_has_too_few_tool_calls(make_item, tools):
    items = [item(make_item)]
    answer = Completion(
        text=None,
        finish_reason="tool_calls",
        tool_calls=[ToolCall(id="a", function=FunctionCall(name="answer", arguments='{"answer": "First Light"}'))],
    )
    config = DistillConfig(enabled=True, n=1)
    [trajectory] = judge_rollouts(
        items,
        run(Teacher(config, LLMClient(ScriptedBackend(default=answer, native_tools=True)), tools), items),
        config,
        0.8,
    )
    assert trajectory.num_tool_calls == 0 and trajectory.reject_reason == "too_few_tool_calls" and trajectory.correct


def test_guided_runs_hide_the_hint_and_rewrite_or_reject_what_depends_on_it(make_item, tools):
    items = [item(make_item)]
    [s] = seeds(items, 2)
    plans = {
        # a thought names the director before any search showed her: rewritten, then kept
        s[0]: ["The director must be Alice Ames, who was born there. " + SEARCH, "<answer>First Light"],
        # the query itself names her: the run depends on the hint and is rejected
        s[1]: ['<tool_call>{"name": "search", "arguments": {"query": "Alice Ames films"}}', "<answer>First Light"],
    }
    replies = scripted_by_sample(plans)

    def teacher_model(request):
        if request.stage == "distill_rewrite":
            return "I should find who was born in Springfield and what they directed."
        return replies(request)

    backend = ScriptedBackend(default=teacher_model)
    config = DistillConfig(enabled=True, n=2, guided=True, demonstrations=False)
    guide = lambda it: path_guidance(it, NAMES.get)  # noqa: E731
    teacher = Teacher(config, LLMClient(backend), tools, guidance=guide)
    judged = {t.sample_index: t for t in judge_rollouts(items, run(teacher, items), config, 0.8)}
    hinted = [r for r in backend.requests if r.stage == "distill"]
    assert all("Alice Ames --[directed]--> First Light" in r.messages[0]["content"] for r in hinted)
    for trajectory in judged.values():
        assert trajectory.guided and "Hint" not in " ".join(m.content or "" for m in trajectory.messages)
    kept = judged[0]
    assert kept.reject_reason is None and kept.selected and kept.metadata["hint_rewrites"] == 1
    assert kept.messages[2].content == "I should find who was born in Springfield and what they directed."
    assert leaks(kept.messages, guide(items[0]).hidden) == []
    assert judged[1].reject_reason == "hint_leak"


def test_a_rewrite_that_still_leaks_falls_back_to_dropping_the_sentence(make_item, tools):
    items = [item(make_item)]
    [s] = seeds(items, 1)
    plans = {s[0]: ["Surely Alice Ames. I will check. " + SEARCH, "<answer>First Light"]}
    replies = scripted_by_sample(plans)
    backend = ScriptedBackend(default=lambda r: "It is Alice Ames." if r.stage == "distill_rewrite" else replies(r))
    config = DistillConfig(enabled=True, n=1, guided=True, demonstrations=False)
    teacher = Teacher(config, LLMClient(backend), tools, guidance=lambda it: path_guidance(it, NAMES.get))
    [trajectory] = judge_rollouts(items, run(teacher, items), config, 0.8)
    assert trajectory.messages[2].content == "I will check." and trajectory.reject_reason is None


def test_a_rerun_replays_every_finished_rollout_from_the_cache(make_item, tools, tmp_path):
    items = [item(make_item, index) for index in range(3)]
    plans = {seed: [SEARCH, "<answer>First Light"] for row in seeds(items, 2) for seed in row}
    config = DistillConfig(enabled=True, n=2, demonstrations=False)
    first_backend = ScriptedBackend(default=scripted_by_sample(plans))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    first = run(Teacher(config, LLMClient(first_backend, cache=cache), tools), items)
    second_backend = ScriptedBackend(default=lambda request: pytest.fail("a finished turn was asked again"))
    client = LLMClient(second_backend, cache=cache)
    second = run(Teacher(config, client, tools), items)
    assert [t.model_dump() for t in first] == [t.model_dump() for t in second]
    assert len(first_backend.requests) == 12 and second_backend.requests == []
    assert client.ledger.totals  # the replayed calls are still counted, as cache hits


def test_the_json_protocol_makes_the_teacher_search_before_it_may_answer(make_item, tools):
    import json

    items = [item(make_item)]
    [s] = seeds(items, 1)
    call = lambda name, **arguments: json.dumps({"name": name, "arguments": arguments})  # noqa: E731
    plans = {s[0]: [call("search", query="film director born in Springfield"), call("answer", answer="First Light")]}
    backend = ScriptedBackend(default=scripted_by_sample(plans))
    config = DistillConfig(enabled=True, n=1, max_turns=3, protocol="json", min_tool_calls=1)
    teacher = Teacher(config, LLMClient(backend), tools)
    [judged] = judge_rollouts(items, run(teacher, items), config, 0.8)
    assert (
        teacher.protocol == "json" and judged.selected and judged.reject_reason is None and judged.num_tool_calls == 1
    )
    options = [[o["properties"]["name"]["const"] for o in request.json_schema["anyOf"]] for request in backend.requests]
    assert options == [["search", "open"], ["search", "open", "answer"]]  # no answer before min_tool_calls searches
    # the answer, a JSON call on the wire, is stored as the default contract finishes: in <answer> tags
    assert [m.role for m in judged.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert judged.messages[4].content == "<answer>First Light</answer>" and judged.final_answer == "First Light"
    assert [tool["function"]["name"] for tool in judged.tools] == ["search", "open"]

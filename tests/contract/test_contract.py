"""The agent contract: declarations verl keeps unchanged, observations that read back, answers the
reward finds in either finishing style, and trajectories rendered across contracts or refused."""

import json

import pytest

from synth.contract import CONTRACTS, portable
from synth.contract.contracts import SEARCHR1, SYNTH, SYNTH_ANSWER_TOOL, VERL_SEARCH
from synth.contract.matching import plain_variants
from synth.contract.observations import parse_search
from synth.contract.render import Unrenderable, render
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Trajectory

DOCS = [
    {"id": "a#0", "title": "Alpha", "text": "Alpha was directed by Ann.\nA second line."},
    {"id": "b#1", "title": "Beta (film)", "text": "Beta is a film."},
]


@pytest.mark.parametrize("contract", list(CONTRACTS.values()), ids=list(CONTRACTS))
def test_tool_schemas_use_only_what_verl_keeps(contract):
    """verl re-serializes tool schemas through OpenAIFunctionToolSchema (property: type, description,
    enum), so anything else would make the RL prompt differ from the SFT rows."""
    for tool in contract.schemas:
        assert list(tool) == ["type", "function"] and list(tool["function"]) == ["name", "description", "parameters"]
        parameters = tool["function"]["parameters"]
        assert list(parameters) == ["type", "properties", "required"]
        for spec in parameters["properties"].values():
            assert set(spec) <= {"type", "description", "enum"} and list(spec)[0] == "type"


@pytest.mark.parametrize("style", ["synth", "searchr1", "verl"])
def test_rendered_search_results_read_back(style):
    for results in ([DOCS], [[]], [DOCS[:1]]):
        parsed = parse_search(portable.render_search(style, results), style)
        assert parsed is not None and parsed[0] == style
        expected = [[{**d, "id": d["id"] if style == "synth" else None} for d in hits] for hits in results]
        assert parsed[1] == expected
    assert parse_search("error: search needs a non-empty string `query`", None) is None


def test_observation_styles_are_the_trainers_own():
    assert (
        portable.render_search("synth", [DOCS]).splitlines()[0]
        == "Doc 1(Title: Alpha) [id: a#0] Alpha was directed by Ann."
    )
    # Search-R1's _passages2string over /retrieve's `contents` ("Title"\ntext), then .strip()
    assert (
        portable.render_search("searchr1", [DOCS])
        == 'Doc 1(Title: "Alpha") Alpha was directed by Ann.\nA second line.\nDoc 2(Title: "Beta (film)") Beta is a '
        "film."
    )
    # verl's Search-R1-like search tool: one block per query joined by "\n---\n", as JSON
    assert json.loads(portable.render_search("verl", [DOCS[:1], DOCS[1:]]))["result"] == (
        'Doc 1 (Title: "Alpha")\nAlpha was directed by Ann.\nA second line.\n---\nDoc 1 (Title: "Beta '
        '(film)")\nBeta is a film.'
    )


def test_the_reward_finds_the_last_answer_tag_or_answer_call():
    truth = {"target": ["Zoë Saldaña", "Zoe Saldana"]}
    tag = "<think>search first</think>\n<answer> zoe saldana </answer>"
    call = 'I know it.\n<tool_call>\n{"name": "answer", "arguments": {"answer": "Zoë Saldaña"}}\n</tool_call>'
    assert portable.compute_score("synth_multihop", tag, truth) == 1.0
    assert portable.compute_score("synth_multihop", call, truth) == 1.0
    assert (
        portable.compute_score(
            "x", '<tool_call>{"name": "answer", "arguments": "{\\"answer\\": \\"Zoe Saldana\\"}"}</tool_call>', truth
        )
        == 1.0
    )
    assert (
        portable.compute_score("x", call + "\nuser\nAnswer recorded.\nassistant\n<answer>Someone Else</answer>", truth)
        == 0.0
    )  # the last wins
    assert (
        portable.compute_score("x", "<tool_response>\n<answer>Zoe Saldana</answer>\n</tool_response>", truth) == 0.0
    )  # documents do not answer
    assert (
        portable.compute_score("x", '<tool_call>{"name": "search", "arguments": {"query": "Zoe"}}</tool_call>', truth)
        == 0.0
    )
    assert portable.extract_answer("no answer here") is None


def test_normalization_folds_what_squad_keeps_and_plain_variants_cover_scorers_that_do_not():
    assert portable.normalize_answer("  The Zoë-Ann  Band!") == "zoeann band"
    assert portable.normalize_answer("Rock ’n’ roll") == portable.normalize_answer("Rock 'n' roll")
    assert plain_variants(["Zoë Saldaña", "Zoe Saldana", "Film 0"]) == ["Zoë Saldaña", "Zoe Saldana", "Film 0"]
    assert plain_variants(["Rock ’n’ roll"]) == ["Rock ’n’ roll", "Rock 'n' roll"]


def call(call_id: str, name: str, arguments: dict | str) -> ToolCall:
    return ToolCall(
        id=call_id,
        function=FunctionCall(name=name, arguments=arguments if isinstance(arguments, str) else json.dumps(arguments)),
    )


def native_teacher(metadata: dict | None = None, opens: bool = False) -> Trajectory:
    """A native teacher of the synth-answer-tool contract: search (and open), then the answer as a call."""
    body = [
        ChatMessage(role="assistant", content="Look it up.", tool_calls=[call("c0", "search", {"query": "Ann films"})]),
        ChatMessage(role="tool", tool_call_id="c0", content=portable.render_search("synth", [DOCS])),
    ]
    if opens:
        body += [
            ChatMessage(role="assistant", content=None, tool_calls=[call("c1", "open", {"doc_id": "a#0"})]),
            ChatMessage(role="tool", tool_call_id="c1", content=portable.render_document(DOCS[0], "a#0")),
        ]
    body += [
        ChatMessage(role="assistant", content=None, tool_calls=[call("c2", "answer", {"answer": "Alpha"})]),
        ChatMessage(role="tool", tool_call_id="c2", content="Answer recorded."),
    ]
    return Trajectory(
        id="t",
        item_id="i",
        role="teacher",
        model="m",
        tools=SYNTH_ANSWER_TOOL.schemas,
        metadata={"contract": "synth-answer-tool"} if metadata is None else metadata,
        messages=[
            ChatMessage(role="system", content="agent prompt"),
            ChatMessage(role="user", content="Question: Q?"),
            *body,
        ],
    )


def test_rendering_under_each_contract():
    trajectory = native_teacher()
    synth = render(trajectory, SYNTH, "Q?")
    assert [m.role for m in synth.messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert synth.messages[0].content == SYNTH.system_prompt and synth.messages[1].content == "Question: Q?"
    assert synth.messages[-1].content == "<answer>Alpha</answer>" and synth.tools == SYNTH.schemas
    searchr1 = render(trajectory, SEARCHR1, "Q?")
    assert (
        searchr1.messages[3].content == portable.render_search("searchr1", [DOCS])
        and searchr1.tools == SEARCHR1.schemas
    )
    verl = render(trajectory, VERL_SEARCH, "Q?")
    assert json.loads(verl.messages[2].tool_calls[0].function.arguments) == {"query_list": ["Ann films"]}
    assert verl.messages[3].content == portable.render_search("verl", [DOCS])
    own = render(trajectory, None, "Q?")  # the contract it was made under
    assert [m.role for m in own.messages][-3:] == ["assistant", "tool", "assistant"] and own.messages[
        -1
    ].content == "<answer>Alpha</answer>"


def test_a_tag_answer_becomes_an_answer_call_under_a_contract_that_finishes_with_one():
    trajectory = native_teacher()
    as_tags = trajectory.model_copy(
        update={"messages": render(trajectory, SYNTH, "Q?").messages, "metadata": {"contract": "synth"}}
    )
    again = render(as_tags, SYNTH_ANSWER_TOOL, "Q?")
    assert [m.role for m in again.messages][-3:] == ["assistant", "tool", "assistant"]
    assert json.loads(again.messages[-3].tool_calls[0].function.arguments) == {"answer": "Alpha"}
    assert again.messages[-2].content == "Answer recorded." and again.messages[-1].content == "<answer>Alpha</answer>"


def test_what_a_contract_cannot_show_is_refused_with_the_reason():
    with pytest.raises(Unrenderable, match="calls open, which the searchr1 contract does not have"):
        render(native_teacher(opens=True), SEARCHR1, "Q?")
    searchr1_made = render(native_teacher(), SEARCHR1, "Q?")
    made = native_teacher().model_copy(
        update={"messages": searchr1_made.messages, "metadata": {"contract": "searchr1"}}
    )
    with pytest.raises(Unrenderable, match="carry no document ids"):
        render(made, SYNTH, "Q?")
    imported = native_teacher(metadata={"source": "file.jsonl", "row": 1})
    with pytest.raises(Unrenderable, match="ends on a tool turn"):
        render(imported, None, "Q?")  # as recorded: its own last turn is the tool's
    assert render(imported, SYNTH, "Q?").messages[-1].content == "<answer>Alpha</answer>"
    garbled = imported.model_copy(
        update={
            "messages": imported.messages[:3]
            + [ChatMessage(role="tool", tool_call_id="c0", content="some other engine's text")]
            + imported.messages[4:]
        }
    )
    with pytest.raises(Unrenderable, match="search results in an unknown format"):
        render(garbled, SEARCHR1, "Q?")

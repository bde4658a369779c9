"""The trajectory exports (sft, sft-chatml, sharegpt, searchr1-sft, dpo) against hand-written
expected rows: every format shows the contract's prompt, tools, observations and final answer, and
`--contract` changes all of them together."""

import json

import pyarrow.parquet as pq
import pytest

from synth.contract.contracts import SYNTH, SYNTH_ANSWER_TOOL
from synth.errors import ConfigError, NotFoundError
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Trajectory
from synth.store.export import export_version as export_split
from synth.store.export import reasoning_note
from synth.store.export.prompts import SEARCH_R1_PROMPT
from synth.store.export.searchr1_sft import Unsupported, assistant_text, thought
from synth.store.export.trajectories import DATASETS_NOTE
from synth.store.publish import VersionSpec, publish_version


def export_version(*args, **options):
    """These tests check formats over every item of a version: the held-out split is tested in test_splits."""
    return export_split(*args, **{"split": "all", **options})


SEARCH = {
    "type": "function",
    "function": {"name": "search", "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}},
}
ANSWER = {
    "type": "function",
    "function": {"name": "answer", "parameters": {"type": "object", "properties": {"answer": {"type": "string"}}}},
}
PROMPT = [
    ChatMessage(role="system", content="Use the tools."),
    ChatMessage(role="user", content="Question: Which film?"),
]
DOC_A = "Doc 1(Title: Alpha) [id: a#0] Alpha was directed by Ann."
DOC_B = "Doc 1(Title: Beta) [id: b#0] Beta is a film.\nDoc 2(Title: Film 0) [id: f#0] Film 0 was made by Ann."


def call(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def rollout(item_id: str, name: str, body: list[ChatMessage], role: str = "teacher", **fields) -> Trajectory:
    return Trajectory(
        id=f"{item_id}-{name}",
        item_id=item_id,
        role=role,
        model="teacher",
        tools=[SEARCH, ANSWER],
        messages=PROMPT + body,
        metadata={"contract": "synth-answer-tool"},
        **fields,
    )


CHOSEN = [  # a native teacher: parallel searches with one repeated call id, then the answer as a call
    ChatMessage(
        role="assistant",
        content=None,
        reasoning_content="Two searches.",
        tool_calls=[call("c1", "search", '{"query": "Town 0 director"}'), call("c1", "search", '{"query": "Film 0"}')],
    ),
    ChatMessage(role="tool", tool_call_id="c1", content=DOC_A),
    ChatMessage(role="tool", tool_call_id="c1", content=DOC_B),
    ChatMessage(role="assistant", content="It is Film 0.", tool_calls=[call("c2", "answer", '{"answer": "Film 0"}')]),
    ChatMessage(role="tool", tool_call_id="c2", content="Answer recorded."),
]
WRONG = [ChatMessage(role="assistant", content="<answer>Film 9</answer>")]
MALFORMED = [
    ChatMessage(role="assistant", content="Searching.", tool_calls=[call("c1", "search", '{"query": "x"')]),
    ChatMessage(role="tool", tool_call_id="c1", content="error: not valid JSON"),
    ChatMessage(role="assistant", content="<answer>Film 0</answer>"),
]
OPENS = [
    ChatMessage(role="assistant", content=None, tool_calls=[call("c1", "open", '{"doc_id": "f#0"}')]),
    ChatMessage(role="tool", tool_call_id="c1", content="(Title: Film 0) [id: f#0] Film 0 was made by Ann."),
    ChatMessage(role="assistant", content="<answer>Film 0</answer>"),
]


@pytest.fixture
def published(settings, make_item):
    trajectories = [
        rollout("item-0", "chosen", CHOSEN, selected=True),
        rollout("item-0", "wrong", WRONG, reject_reason="incorrect"),
        rollout("item-0", "also-right", CHOSEN),
        rollout("item-0", "silent", WRONG, reject_reason="no_answer"),
        rollout("item-0", "solver", WRONG, role="solver", selected=True),
        rollout("item-1", "malformed", MALFORMED, selected=True),
        rollout("item-1", "wrong", WRONG, reject_reason="incorrect"),
        rollout("item-2", "opens", OPENS, selected=True),
    ]
    return publish_version(
        settings,
        VersionSpec(name="demo", recipe="multihop"),
        {"items": [make_item(0), make_item(1), make_item(2)], "trajectories": trajectories},
    )


def read_jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def question(index: int) -> str:
    return f"Which film was directed by the person born in Town {index}?"


def test_sft_exports_selected_teacher_trajectories_rendered_under_the_default_contract(settings, published, tmp_path):
    result = export_version(settings, "demo", "sft", tmp_path / "sft.jsonl", contract="synth", keep_malformed=True)
    first, second, third = read_jsonl(tmp_path / "sft.jsonl")
    assert [row["trajectory_id"] for row in (first, second, third)] == [
        "item-0-chosen",
        "item-1-malformed",
        "item-2-opens",
    ]
    assert first["tools"] == SYNTH.schemas
    assert first["messages"] == [
        {"role": "system", "content": SYNTH.system_prompt},
        {"role": "user", "content": f"Question: {question(0)}"},
        {
            "role": "assistant",
            "content": None,
            "reasoning_content": "Two searches.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search", "arguments": {"query": "Town 0 director"}},
                },
                {"id": "c1", "type": "function", "function": {"name": "search", "arguments": {"query": "Film 0"}}},
            ],
        },
        {"role": "tool", "content": DOC_A, "tool_call_id": "c1"},
        {"role": "tool", "content": DOC_B, "tool_call_id": "c1"},
        # the answer call becomes the contract's finish: <answer> in a last turn without calls
        {"role": "assistant", "content": "It is Film 0.\n<answer>Film 0</answer>"},
    ]
    assert (
        second["messages"][2]["tool_calls"][0]["function"]["arguments"] == '{"query": "x"'
    )  # malformed stays a string
    assert result.notes == [
        "1 tool calls have malformed arguments, written as the strings the model produced",
        reasoning_note("sft", "keep-all"),  # which turns kept their reasoning, and where
        DATASETS_NOTE,  # the minimum datasets version that reads the file as written (4.6.1 pads, 4.7.0 does not)
    ]
    assert reasoning_note("sft", "keep-all").startswith("reasoning: kept on every assistant turn")
    assert "datasets >= 4.7" in DATASETS_NOTE


def test_a_trajectory_keeps_the_contract_it_was_made_under_unless_told_otherwise(settings, published, tmp_path):
    export_version(settings, "demo", "sft", tmp_path / "sft.jsonl")  # recorded: synth-answer-tool
    row = read_jsonl(tmp_path / "sft.jsonl")[0]
    assert (
        row["tools"] == SYNTH_ANSWER_TOOL.schemas and row["messages"][0]["content"] == SYNTH_ANSWER_TOOL.system_prompt
    )
    assert row["messages"][-3:] == [
        {
            "role": "assistant",
            "content": "It is Film 0.",
            "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "answer", "arguments": {"answer": "Film 0"}}}
            ],
        },
        {"role": "tool", "content": "Answer recorded.", "tool_call_id": "c2", "name": "answer"},
        {"role": "assistant", "content": "<answer>Film 0</answer>"},  # no row ends on a tool turn
    ]


def test_chatml_export_writes_the_same_conversation_as_tags(settings, published, tmp_path):
    chatml = export_version(
        settings, "demo", "sft-chatml", tmp_path / "chatml.jsonl", contract="synth", keep_malformed=True
    )
    assert chatml.rows == 3
    first, second, _ = read_jsonl(tmp_path / "chatml.jsonl")
    system = first["messages"][0]
    assert system["role"] == "system" and system["content"].startswith(SYNTH.system_prompt + "\n\n# Tools\n\n")
    lines = "\n".join(json.dumps(tool) for tool in SYNTH.schemas)
    assert f"<tools>\n{lines}\n</tools>" in system["content"]
    assert first["messages"][1:] == [
        {"role": "user", "content": f"Question: {question(0)}"},
        {
            "role": "assistant",
            "content": (
                "<think>\nTwo searches.\n</think>\n"
                '<tool_call>\n{"name": "search", "arguments": {"query": "Town 0 director"}}\n</tool_call>\n'
                '<tool_call>\n{"name": "search", "arguments": {"query": "Film 0"}}\n</tool_call>'
            ),
        },
        {
            "role": "user",
            "content": f"<tool_response>\n{DOC_A}\n</tool_response>\n<tool_response>\n{DOC_B}\n</tool_response>",
        },
        {"role": "assistant", "content": "It is Film 0.\n<answer>Film 0</answer>"},
    ]
    assert second["messages"][2] == {
        "role": "assistant",
        "content": ('Searching.\n<tool_call>\n{"name": "search", "arguments": "{\\"query\\": \\"x\\""}\n</tool_call>'),
    }


def test_sharegpt_export_alternates_as_llamafactory_requires(settings, published, tmp_path):
    result = export_version(settings, "demo", "sharegpt", tmp_path / "sharegpt.jsonl", contract="synth")
    first = read_jsonl(tmp_path / "sharegpt.jsonl")[0]
    assert first["system"] == SYNTH.system_prompt and json.loads(first["tools"]) == SYNTH.schemas
    assert first["conversations"] == [
        {"from": "human", "value": f"Question: {question(0)}"},
        {  # parallel calls: one per turn, each with its own result, which every template renders
            "from": "function_call",
            "value": (  # the reasoning is kept, in front of the first call
                '<think>\nTwo searches.\n</think>\n\n<tool_call>{"name": "search", "arguments": {"query": "Town 0 '
                'director"}}</tool_call>'
            ),
        },
        {"from": "observation", "value": DOC_A},
        {"from": "function_call", "value": '{"name": "search", "arguments": {"query": "Film 0"}}'},
        {"from": "observation", "value": DOC_B},
        {"from": "gpt", "value": "It is Film 0.\n<answer>Film 0</answer>"},
    ]
    assert "</tool_response>" not in json.dumps(first)
    assert any("1 turns with parallel calls are written one call per function_call turn" in n for n in result.notes)
    assert '"formatting": "sharegpt"' in result.notes[0]


def test_sharegpt_rows_are_what_llamafactorys_converter_keeps(settings, published, tmp_path):
    """LLaMA-Factory's documented sharegpt rules (its SharegptDatasetConverter): human/observation on even
    positions, gpt/function_call on odd ones, an even count, function_call values that parse as calls."""
    export_version(settings, "demo", "sharegpt", tmp_path / "sharegpt.jsonl", contract="synth-answer-tool")
    for row in read_jsonl(tmp_path / "sharegpt.jsonl"):
        turns = row["conversations"]
        assert len(turns) % 2 == 0 and turns[-1]["from"] == "gpt"
        for index, turn in enumerate(turns):
            assert turn["from"] in (("human", "observation") if index % 2 == 0 else ("gpt", "function_call"))
            if turn["from"] == "function_call":
                value = turn["value"]
                payload = (
                    value[value.index("<tool_call>") + 11 : value.rindex("</tool_call>")]
                    if "<tool_call>" in value
                    else value
                )
                calls = json.loads(payload)
                assert all({"name", "arguments"} <= set(c) for c in (calls if isinstance(calls, list) else [calls]))


def test_searchr1_sft_export_writes_one_completion_in_search_r1_tags(settings, published, tmp_path):
    out = tmp_path / "searchr1.parquet"
    result = export_version(settings, "demo", "searchr1-sft", out, keep_malformed=True)  # default contract: searchr1
    rows = pq.read_table(out).to_pylist()
    assert result.rows == 1 and result.notes == [
        reasoning_note("searchr1-sft", "keep-all"),
        "skipped 2 selected trajectories that cannot be shown faithfully "
        "(malformed search call: 1, calls open, which the searchr1 contract does not have: 1)",
    ]
    prompt, completion = rows[0]["messages"]
    assert prompt == {"role": "user", "content": SEARCH_R1_PROMPT.replace("{question}", question(0))}
    assert completion == {
        "role": "assistant",
        "content": (  # results as Search-R1's own trainer shows them
            "<think>Two searches.</think>\n"
            '<search> Town 0 director </search>\n\n<information>Doc 1(Title: "Alpha") Alpha was directed by '
            "Ann.</information>\n\n"
            '<search> Film 0 </search>\n\n<information>Doc 1(Title: "Beta") Beta is a film.\nDoc 2(Title: "Film 0") '
            "Film 0 was made by Ann."
            "</information>\n\n<think>It is Film 0.</think>\n<answer>Film 0</answer>"
        ),
    }


@pytest.mark.parametrize("contract", ["synth", "searchr1", "verl-search"])
def test_every_sft_format_shows_the_same_tools_observations_and_answer(settings, published, tmp_path, contract):
    """The acceptance check: one teacher trajectory through sft, sft-chatml, searchr1-sft and sharegpt."""
    paths = {fmt: tmp_path / f"{fmt}.jsonl" for fmt in ("sft", "sft-chatml", "searchr1-sft", "sharegpt")}
    for fmt, path in paths.items():
        export_version(settings, "demo", fmt, path, contract=contract, where="item_id = 'item-0'")
    sft, chatml, searchr1, sharegpt = (read_jsonl(path)[0] for path in paths.values())
    observations = [m["content"] for m in sft["messages"] if m["role"] == "tool"]
    expected = {
        "synth": [DOC_A, DOC_B],
        "searchr1": ['Doc 1(Title: "Alpha") Alpha was directed by Ann.'],
        "verl-search": ['{"result": "Doc 1 (Title: \\"Alpha\\")\\nAlpha was directed by Ann."}'],
    }[contract]
    assert observations[: len(expected)] == expected
    for text in observations:
        assert text in chatml["messages"][3]["content"] and text in searchr1["messages"][1]["content"]
        assert any(text in turn["value"] for turn in sharegpt["conversations"] if turn["from"] == "observation")
    tools = sft["tools"]
    assert json.loads(sharegpt["tools"]) == tools and all(
        json.dumps(tool) in chatml["messages"][0]["content"] for tool in tools
    )
    argument = {
        "synth": {"query": "Town 0 director"},
        "searchr1": {"query": "Town 0 director"},
        "verl-search": {"query_list": ["Town 0 director"]},
    }[contract]
    assert sft["messages"][2]["tool_calls"][0]["function"]["arguments"] == argument
    for text in (
        sft["messages"][-1]["content"],
        chatml["messages"][-1]["content"],
        searchr1["messages"][1]["content"],
        sharegpt["conversations"][-1]["value"],
    ):
        assert text.endswith("<answer>Film 0</answer>")


def test_a_prompt_template_makes_the_question_turn_of_sft_and_rl_alike(settings, published, tmp_path):
    (tmp_path / "prompt.txt").write_text("Find out: {question}")
    for contract in ("synth", "synth-answer-tool"):
        export_version(
            settings,
            "demo",
            "sft",
            tmp_path / f"{contract}.jsonl",
            prompt_template=tmp_path / "prompt.txt",
            where="item_id = 'item-0'",
            contract=contract,
        )
        export_version(
            settings,
            "demo",
            "verl",
            tmp_path / contract / "train.parquet",
            prompt_template=tmp_path / "prompt.txt",
            contract=contract,
        )
        sft = read_jsonl(tmp_path / f"{contract}.jsonl")[0]
        rl = pq.read_table(tmp_path / contract / "train.parquet").to_pylist()[0]
        system = {"synth": SYNTH, "synth-answer-tool": SYNTH_ANSWER_TOOL}[contract].system_prompt
        assert (
            sft["messages"][:2]
            == rl["prompt"]
            == [{"role": "system", "content": system}, {"role": "user", "content": f"Find out: {question(0)}"}]
        )


def test_searchr1_sft_refuses_a_contract_that_finishes_with_a_call(settings, published, tmp_path):
    with pytest.raises(ConfigError, match="finishes with an answer call"):
        export_version(settings, "demo", "searchr1-sft", tmp_path / "x.jsonl", contract="synth-answer-tool")


def test_searchr1_sft_wraps_free_text_in_think_and_keeps_tagged_text():
    assert thought("Found it. <answer>Film 0</answer>") == "<think>Found it.</think>\n<answer>Film 0</answer>"
    assert thought("<think>a</think> <answer>b</answer>") == "<think>a</think> <answer>b</answer>"


def test_searchr1_sft_cannot_express_other_tools():
    with pytest.raises(Unsupported, match="calls open"):
        assistant_text(
            PROMPT
            + [
                ChatMessage(role="assistant", content=None, tool_calls=[call("c", "open", '{"doc_id": "d"}')]),
                ChatMessage(role="tool", tool_call_id="c", content="(Title: D) d"),
            ]
        )


def test_dpo_pairs_the_selected_teacher_trajectory_with_each_incorrect_one(settings, published, tmp_path):
    assert (
        export_version(settings, "demo", "dpo", tmp_path / "dpo.jsonl", contract="synth", keep_malformed=True).rows == 2
    )
    first, second = read_jsonl(tmp_path / "dpo.jsonl")
    assert (first["chosen_id"], first["rejected_id"]) == ("item-0-chosen", "item-0-wrong")
    assert (second["chosen_id"], second["rejected_id"]) == ("item-1-malformed", "item-1-wrong")
    assert first["prompt"] == [
        {"role": "system", "content": SYNTH.system_prompt},
        {"role": "user", "content": f"Question: {question(0)}"},
    ]
    assert first["chosen"][0]["content"] is None and first["chosen"][0]["reasoning_content"] == "Two searches."
    assert [c["function"]["arguments"] for c in first["chosen"][0]["tool_calls"]] == [
        {"query": "Town 0 director"},
        {"query": "Film 0"},
    ]
    assert first["chosen"][-1] == {"role": "assistant", "content": "It is Film 0.\n<answer>Film 0</answer>"}
    assert first["rejected"] == [{"role": "assistant", "content": "<answer>Film 9</answer>"}]
    assert first["tools"] == SYNTH.schemas and first["item_id"] == "item-0"
    export_version(settings, "demo", "dpo", tmp_path / "dpo.parquet", contract="synth")
    row = pq.read_table(tmp_path / "dpo.parquet").to_pylist()[0]
    assert [json.loads(tool) for tool in row["tools"]] == SYNTH.schemas and json.loads(row["chosen"][0])["tool_calls"][
        1
    ]["id"] == "c1"


def test_dpo_without_pairs_says_why(settings, make_item, tmp_path):
    only = [
        rollout("item-0", "chosen", CHOSEN, selected=True),
        rollout("item-0", "silent", WRONG, reject_reason="no_answer"),
    ]
    publish_version(
        settings, VersionSpec(name="lonely", recipe="multihop"), {"items": [make_item(0)], "trajectories": only}
    )
    with pytest.raises(NotFoundError, match="no preference pairs.*rejected as incorrect"):
        export_version(settings, "lonely", "dpo", tmp_path / "dpo.jsonl")
    assert not (tmp_path / "dpo.jsonl").exists()


@pytest.mark.parametrize("fmt", ["sft", "sft-chatml", "sharegpt", "searchr1-sft"])
def test_an_export_with_nothing_to_write_is_an_error_that_says_why(settings, published, tmp_path, fmt):
    with pytest.raises(
        NotFoundError, match="nothing to export.*no teacher trajectory is selected in every split matching --where"
    ):
        export_version(settings, "demo", fmt, tmp_path / "out.jsonl", where="item_id = 'nope'")
    with pytest.raises(NotFoundError, match="every matching trajectory was skipped.*calls open"):
        export_version(settings, "demo", fmt, tmp_path / "out.jsonl", where="item_id = 'item-2'", contract="searchr1")
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("fmt", ["sft-chatml", "searchr1-sft", "dpo", "sharegpt"])
def test_trajectory_exports_of_a_version_without_trajectories_say_what_to_do(settings, make_item, tmp_path, fmt):
    publish_version(settings, VersionSpec(name="bare", recipe="multihop"), {"items": [make_item(0)]})
    with pytest.raises(NotFoundError, match="no trajectories"):
        export_version(settings, "bare", fmt, tmp_path / "out.jsonl")


def test_contract_names_are_checked(settings, published, tmp_path):
    with pytest.raises(ConfigError, match="unknown agent contract 'nope'; choose one of synth, synth-answer-tool"):
        export_version(settings, "demo", "sft", tmp_path / "x.jsonl", contract="nope")


def test_a_re_export_neither_repeats_the_answer_nor_the_question_label(settings, published, tmp_path):
    """synth's own sft rows under the answer-call contract end with the call, its receipt and a closing
    `<answer>` turn; imported back and exported under the tag contract, the call becomes the answer
    turn and the closing turn saying it again is left out (trainers would learn the answer twice), and
    the question comes back without the "Question:" label the prompt wrapped it in."""
    from synth.store.imports import import_file

    export_version(settings, "demo", "sft", tmp_path / "calls.jsonl", contract="synth-answer-tool")
    assert read_jsonl(tmp_path / "calls.jsonl")[0]["messages"][-1] == {
        "role": "assistant",
        "content": "<answer>Film 0</answer>",
    }
    imported = import_file(settings, tmp_path / "calls.jsonl", "sft", "again").version
    export_version(settings, imported.ref, "sft", tmp_path / "tags.jsonl", contract="synth")
    for row in read_jsonl(tmp_path / "tags.jsonl"):
        answers = [m for m in row["messages"] if m["role"] == "assistant" and "<answer>" in (m["content"] or "")]
        assert len(answers) == 1, row["messages"]
        assert row["messages"][1]["content"].count("Question:") == 1
    export_version(settings, imported.ref, "verl", tmp_path / "rl" / "train.parquet")
    prompts = pq.read_table(tmp_path / "rl" / "train.parquet").column("prompt").to_pylist()
    assert all(turn["content"].count("Question:") <= 1 for prompt in prompts for turn in prompt)


@pytest.mark.parametrize("fmt", ["sft", "sft-chatml", "sharegpt", "searchr1-sft", "dpo"])
def test_trajectories_with_malformed_calls_are_left_out_and_counted_unless_kept(settings, published, tmp_path, fmt):
    """A call whose arguments are no JSON object would teach the trainer the broken call."""
    out = tmp_path / f"{fmt}.jsonl"
    result = export_version(settings, "demo", fmt, out, contract="synth" if fmt != "searchr1-sft" else None)
    assert "item-1-malformed" not in out.read_text()
    assert any("malformed_tool_call: 1" in note and "--keep-malformed" in note for note in result.notes), result.notes


def test_searchr1_sft_of_an_import_that_finished_by_call_uses_a_prompt_asking_for_tags(settings, published, tmp_path):
    """An imported trajectory keeps its own prompt, unless that prompt has the model call `answer`:
    the Search-R1 completion answers in tags, so the row's prompt must ask for tags."""
    from synth.store.imports import import_file

    export_version(settings, "demo", "sft", tmp_path / "calls.jsonl", contract="synth-answer-tool")
    imported = import_file(settings, tmp_path / "calls.jsonl", "sft", "again").version
    result = export_version(settings, imported.ref, "searchr1-sft", tmp_path / "r1.jsonl")
    rows = read_jsonl(tmp_path / "r1.jsonl")
    assert rows and all(row["messages"][0]["role"] == "user" for row in rows)  # no system turn saying "call answer"
    for row in rows:
        prompt, completion = row["messages"][0]["content"], row["messages"][-1]["content"]
        assert "<answer>" in prompt and "`answer`" not in prompt and completion.endswith("</answer>")
    assert any("asked their model to call `answer`" in note for note in result.notes)

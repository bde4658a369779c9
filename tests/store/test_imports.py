"""`synth datasets import`: real-world-shaped trajectory files come back unchanged through
import -> export in the same format, variants are normalized, bad rows are named."""

import json
import re
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synth.errors import InputFileError, NotFoundError
from synth.store.export import export_version as export_split
from synth.store.imports import FORMATS, import_file
from synth.store.imports.fields import ImportFields
from synth.store.reader import iter_records


def export_version(*args, **options):
    """These tests check formats over every item of a version: the held-out split is tested in test_splits."""
    return export_split(*args, **{"split": "all", **options})


FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "trajectories"


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def test_the_fixtures_hold_the_quirks_the_round_trip_must_keep():
    messages = [message for row in read_jsonl(FIXTURES / "sft.jsonl") for message in row["messages"]]
    calls = [call for message in messages for call in message.get("tool_calls") or []]
    malformed = []
    for call in calls:
        try:
            json.loads(call["function"]["arguments"]) if isinstance(call["function"]["arguments"], str) else None
        except json.JSONDecodeError:
            malformed.append(call)
    # arguments as objects, as exports write them; a malformed string stays a string
    assert all(isinstance(call["function"]["arguments"], dict) for call in calls if call not in malformed) and malformed
    assert all(row["messages"][-1]["role"] == "assistant" for row in read_jsonl(FIXTURES / "sft.jsonl"))
    assert any(message["content"] is None and message.get("tool_calls") for message in messages)
    assert any(len(message.get("tool_calls") or []) == 2 for message in messages)
    assert any("reasoning_content" in message for message in messages)
    ids = [call["id"] for call in calls[:3]]
    assert len(set(ids)) < len(ids)  # call_0 answers twice within one run


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_import_then_export_in_the_same_format_gives_the_file_back(settings, tmp_path, fmt):
    source = FIXTURES / f"{fmt}.jsonl"
    result = import_file(settings, source, fmt, f"round-{fmt}")
    assert result.version.recipe == "imported" and result.rows == len(read_jsonl(source))
    # the fixtures keep a call with malformed arguments: a round trip writes it back (--keep-malformed)
    export_version(settings, result.version.ref, fmt, tmp_path / "again.jsonl", keep_malformed=True)
    assert read_jsonl(tmp_path / "again.jsonl") == read_jsonl(source)


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_parquet_exports_import_back_too(settings, tmp_path, fmt):
    version = import_file(settings, FIXTURES / f"{fmt}.jsonl", fmt, "first").version
    export_version(settings, version.ref, fmt, tmp_path / "rows.parquet", keep_malformed=True)
    again = import_file(settings, tmp_path / "rows.parquet", fmt, "second").version
    export_version(settings, again.ref, fmt, tmp_path / "again.jsonl", keep_malformed=True)
    assert read_jsonl(tmp_path / "again.jsonl") == read_jsonl(FIXTURES / f"{fmt}.jsonl")


def test_imported_records_follow_the_distiller_contract(settings):
    version = import_file(settings, FIXTURES / "dpo.jsonl", "dpo", "pairs").version
    trajectories = {t.id: t for t in iter_records(settings, version, "trajectories")}
    assert len(trajectories) == 5  # the chosen side of the first two rows is stored once
    chosen, rejected = trajectories["teacher-q-gosford-0"], trajectories["teacher-q-gosford-1"]
    assert chosen.role == "teacher" and chosen.model == "imported" and chosen.selected and chosen.reject_reason is None
    assert not rejected.selected and rejected.reject_reason == "incorrect" and rejected.final_answer == "Nashville"
    items = {item.id: item for item in iter_records(settings, version, "items")}
    gosford = items["q-gosford"]
    assert gosford.answer == "Gosford Park" and gosford.metadata["answer_source"] == "trajectory"
    assert gosford.recipe == "imported" and gosford.provenance.generator == "import"
    assert gosford.hops == 4  # the search and open calls of the chosen trajectory; the answer call is no hop


def test_openai_variants_are_normalized(settings, tmp_path):
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    row = {
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "Who directed "}, {"type": "text", "text": "Gosford Park?"}],
            },
            {
                "role": "assistant",
                "content": None,
                "refusal": None,
                "tool_calls": [
                    {
                        "id": "a",
                        "type": "function",
                        "function": {"name": "search", "arguments": {"query": "Gosford Park director"}},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "a", "content": "Robert Altman directed Gosford Park."},
            {"role": "assistant", "content": "<answer>Robert Altman</answer>"},
        ],
        "tools": json.dumps(tools),
        "golden_answers": ["Robert Altman", "Altman"],
        "model": "qwen3-8b",
    }
    version = import_file(settings, write_jsonl(tmp_path / "openai.jsonl", [row]), "sft", "variants").version
    [trajectory] = iter_records(settings, version, "trajectories")
    assert trajectory.messages[0].content == "Who directed Gosford Park?"
    assert trajectory.messages[1].tool_calls[0].function.arguments == '{"query": "Gosford Park director"}'
    assert trajectory.tools == tools and trajectory.model == "qwen3-8b" and trajectory.selected
    [item] = iter_records(settings, version, "items")
    assert (item.answer, item.aliases, item.hops, item.metadata["answer_source"]) == (
        "Robert Altman",
        ["Altman"],
        1,
        "file",
    )


def test_answer_field_and_plain_text_preference_rows(settings, tmp_path):
    rows = [
        {
            "prompt": "Who directed Gosford Park?",
            "chosen": "<answer>Robert Altman</answer>",
            "rejected": "<answer>Julian Fellowes</answer>",
            "reward_model": {"ground_truth": {"target": ["Robert Altman"]}},
            "truth": {"name": "R. Altman"},
        }
    ]
    path = write_jsonl(tmp_path / "trl.jsonl", rows)
    version = import_file(settings, path, "dpo", "plain").version
    [item] = iter_records(settings, version, "items")
    assert item.answer == "Robert Altman"
    version = import_file(settings, path, "dpo", "plain", ImportFields(answer_field="truth.name")).version
    [item] = iter_records(settings, version, "items")
    assert item.answer == "R. Altman"
    export_version(settings, version.ref, "dpo", tmp_path / "pairs.jsonl")
    [pair] = read_jsonl(tmp_path / "pairs.jsonl")
    assert pair["prompt"] == [{"role": "user", "content": "Who directed Gosford Park?"}]
    assert pair["rejected"] == [{"role": "assistant", "content": "<answer>Julian Fellowes</answer>"}]


def test_parquet_and_json_files_are_read(settings, tmp_path):
    rows = read_jsonl(FIXTURES / "sft-chatml.jsonl")
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "chatml.parquet")
    (tmp_path / "chatml.json").write_text(json.dumps({"train": rows}))
    for name in ("chatml.parquet", "chatml.json"):
        version = import_file(settings, tmp_path / name, "sft-chatml", "files").version
        export_version(settings, version.ref, "sft-chatml", tmp_path / f"{name}.jsonl", keep_malformed=True)
        assert read_jsonl(tmp_path / f"{name}.jsonl") == rows


SEARCH_CALL = {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"query": "Q"}'}}


@pytest.mark.parametrize(
    "fmt, row, problem",
    [
        ("sft", {"message": []}, "row 2: no `messages` field"),
        (
            "sft",
            {"messages": [{"role": "user", "content": "Q?"}, {"role": "tool", "content": "r"}]},
            "row 2: messages[1]: a tool message needs the tool_call_id",
        ),
        (
            "sft",
            {"messages": [{"role": "user", "content": "Q?"}, {"role": "assistant", "content": "A", "weight": 1}]},
            "row 2: messages[1] has fields synth does not store: weight",
        ),
        ("sft", {"messages": "[{", "tools": []}, "row 2: `messages` is a string but not valid JSON"),
        ("sft", {"messages": [{"role": "assistant", "content": "A"}]}, "row 2: no user message"),
        (
            "sft",
            {
                "messages": [
                    {"role": "user", "content": "Q?"},
                    {"role": "assistant", "content": None, "tool_calls": [SEARCH_CALL]},
                ]
            },
            "row 2: no answer for 'Q?'",
        ),
        (
            "dpo",
            {"prompt": [{"role": "user", "content": "Q?"}], "chosen": []},
            "row 2: `chosen` must be a non-empty list",
        ),
        ("sft-chatml", {"messages": [{"role": "tool", "content": "r"}]}, "row 2: messages[0] is not a ChatML message"),
        ("searchr1-sft", {"messages": [{"role": "user", "content": "Q?"}]}, "row 2: a Search-R1 row needs"),
    ],
)
def test_a_bad_row_is_named_and_nothing_is_published(settings, tmp_path, fmt, row, problem):
    good = read_jsonl(FIXTURES / f"{fmt}.jsonl")[0]
    path = write_jsonl(tmp_path / "bad.jsonl", [good, row])
    with pytest.raises(InputFileError, match=re.escape(f"bad.jsonl {problem}")):
        import_file(settings, path, fmt, "broken")
    with pytest.raises(NotFoundError):
        export_version(settings, "broken", fmt, tmp_path / "never.jsonl")


def test_unreadable_files_are_named(settings, tmp_path):
    good = (FIXTURES / "sft.jsonl").read_text().splitlines()[0]
    (tmp_path / "bad.jsonl").write_text(f"{good}\n{{not json\n")
    with pytest.raises(InputFileError, match="bad.jsonl row 2: not valid JSON"):
        import_file(settings, tmp_path / "bad.jsonl", "sft", "x")
    with pytest.raises(NotFoundError, match="does not exist"):
        import_file(settings, tmp_path / "missing.jsonl", "sft", "x")
    shutil.copy(FIXTURES / "sft.jsonl", tmp_path / "rows.txt")
    with pytest.raises(Exception, match="synth reads .jsonl, .json, .csv, .parquet"):
        import_file(settings, tmp_path / "rows.txt", "sft", "x")


def test_chatml_from_elsewhere_becomes_openai_messages(settings, tmp_path):
    tool = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
    system = f"# Tools\n\nSchemas:\n<tools>\n{json.dumps(tool)}\n</tools>\n\nCall them in tags."
    row = {
        "messages": [
            {"role": "system", "content": system},
            {"role": "user", "content": "Who directed Gosford Park?"},
            {
                "role": "assistant",
                "content": '<tool_call>\n{"arguments": {"query": "Gosford Park"}, "name": "search"}\n</tool_call>',
            },
            {"role": "user", "content": "<tool_response>\nRobert Altman directed it.\n</tool_response>"},
            {"role": "assistant", "content": "<answer>Robert Altman</answer>"},
        ]
    }
    version = import_file(settings, write_jsonl(tmp_path / "hermes.jsonl", [row]), "sft-chatml", "hermes").version
    [trajectory] = iter_records(settings, version, "trajectories")
    assert trajectory.tools == [tool] and [m.role for m in trajectory.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
    ]
    assert (
        trajectory.messages[1].content is None
        and trajectory.messages[1].tool_calls[0].function.arguments == '{"query": "Gosford Park"}'
    )
    assert trajectory.messages[2].tool_call_id == trajectory.messages[1].tool_calls[0].id == "call_0"

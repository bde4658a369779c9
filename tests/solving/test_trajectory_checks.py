"""Trajectory checks beyond the answer and step labels, on hand-written trajectories: each rule of
synth.solving.trajectory_reading and synth.solving.trajectory_checks, and what counts as naming."""

import json

from synth.contract.portable import extract_answer
from synth.kg.name_mentions import WorldNames
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Trajectory
from synth.solving.rejection import RejectionConfig, judge_rollouts
from synth.solving.trajectory_checks import unseen_entities
from synth.solving.trajectory_reading import read_trajectory

NAMES = WorldNames(["Alice Ames", "Springfield", "First Light", "Bob Burns", "Iron", "Film director", "Satire"])
QUESTION = "Which film was directed by someone born in Springfield?"


def doc(number: int, doc_id: str, title: str, text: str) -> str:
    return f"Doc {number}(Title: {title}) [id: {doc_id}] {text}"


BORN = doc(1, "d1", "Alice Ames", "Alice Ames was born in Springfield. She directed First Light.")
FILM = doc(1, "d2", "First Light", "First Light is a drama film directed by Alice Ames.")
OTHER = doc(1, "d3", "Bob Burns", "Bob Burns was born in Shelbyville.")


def conversation(*turns) -> list[ChatMessage]:
    """turns: ("search", query, observation) or ("open", doc id, observation) or ("answer", text)."""
    messages = [ChatMessage(role="system", content="Use the tools."), ChatMessage(role="user", content=QUESTION)]
    for number, turn in enumerate(turns):
        if turn[0] == "answer":
            messages.append(ChatMessage(role="assistant", content=f"<answer>{turn[1]}</answer>"))
            continue
        name, argument, observation = turn[:3]
        key = "query" if name == "search" else "id"
        call = ToolCall(id=f"call_{number}", function=FunctionCall(name=name, arguments=json.dumps({key: argument})))
        messages.append(ChatMessage(role="assistant", content=turn[3] if len(turn) > 3 else None, tool_calls=[call]))
        messages.append(ChatMessage(role="tool", tool_call_id=call.id, name=name, content=observation))
    return messages


def trajectory(messages, index=0) -> Trajectory:
    calls = sum(len(message.tool_calls or []) for message in messages)
    answer = extract_answer(messages[-1].content)
    return Trajectory(
        id=f"t{index}",
        item_id="item-0",
        role="teacher",
        model="m",
        messages=messages,
        sample_index=index,
        final_answer=answer,
        num_tool_calls=calls,
        finish_reason="answered",
    )


def judged(make_item, *conversations, **config):
    item = make_item(0, question=QUESTION, answer="First Light", aliases=[])
    rollouts = [trajectory(messages, index=index) for index, messages in enumerate(conversations)]
    return judge_rollouts([item], rollouts, RejectionConfig(**config), names=NAMES)


PROPER = conversation(
    ("search", "director born in Springfield", BORN),
    ("search", "Alice Ames films", FILM),
    ("search", "First Light director", FILM + "\n" + doc(2, "d1", "Alice Ames", "Alice Ames directed First Light.")),
    ("answer", "First Light"),
)


def test_a_proper_solve_is_kept_with_labels_by_the_rules(make_item):
    [kept] = judged(make_item, PROPER)
    assert kept.reject_reason is None and kept.selected and kept.findings == []
    # the answer is in the first observation; the third call names it but shows only d2 and d1, both shown
    # before: nothing new makes it redundant, not verification
    assert kept.answer_seen_at == 1
    assert kept.step_labels == ["exploration", "exploration", "redundant"]


def test_verification_is_a_call_that_names_a_candidate_already_seen_and_brings_something_new(make_item):
    messages = conversation(
        ("search", "director born in Springfield", BORN),
        ("search", "First Light", FILM),
        ("answer", "First Light"),
    )
    [kept] = judged(make_item, messages)
    assert kept.step_labels == ["exploration", "verification"] and kept.reject_reason is None


def test_a_right_guess_never_seen_is_rejected_as_not_grounded(make_item):
    guess = conversation(("search", "director born in Springfield", OTHER), ("answer", "First Light"))
    [rejected] = judged(make_item, guess)
    assert rejected.correct and rejected.reject_reason == "answer_not_grounded" and rejected.answer_seen_at is None
    assert judged(make_item, guess, min_tool_calls=0)[0].reject_reason is None  # closed-book answers allowed
    assert judged(make_item, guess, checks=[])[0].findings == ["answer_not_grounded"]  # off: found, not rejected


def test_a_repeated_search_is_rejected_and_labeled_redundant(make_item):
    repeated = conversation(
        ("search", "director born in Springfield", BORN),
        ("search", "Director  born in springfield", BORN),
        ("answer", "First Light"),
    )
    [rejected] = judged(make_item, repeated)
    assert rejected.reject_reason == "repeated_call" and rejected.step_labels == ["exploration", "redundant"]


def test_naming_an_entity_no_observation_showed_is_rejected(make_item):
    leap = conversation(
        ("search", "director born in Springfield", OTHER),
        ("search", "Alice Ames films", FILM),
        ("answer", "First Light"),
    )
    [rejected] = judged(make_item, leap)
    assert rejected.reject_reason == "unseen_entity"


def test_calls_after_the_answer_was_seen_beyond_the_tolerance(make_item):
    tail = conversation(
        ("search", "director born in Springfield", BORN),
        *[("search", f"more about Springfield {number}", OTHER) for number in range(3)],
        ("answer", "First Light"),
    )

    def reason(tolerance):
        return judged(make_item, tail, checks=["calls_after_answer_seen"], calls_after_answer_seen=tolerance)[0]

    assert reason(2).reject_reason == "calls_after_answer_seen"
    assert reason(3).reject_reason is None


def test_an_incorrect_answer_keeps_incorrect_as_its_reason_and_a_check_rejected_one_is_a_negative(make_item):
    wrong = conversation(("search", "director born in Springfield", OTHER), ("answer", "Bob Burns"))
    guess = conversation(("search", "director born in Springfield", OTHER), ("answer", "First Light"))
    judged_all = judged(make_item, PROPER, wrong, guess)
    assert [t.reject_reason for t in judged_all] == [None, "incorrect", "answer_not_grounded"]


def test_names_count_only_where_written_as_names():
    assert NAMES.named_in("I will look up Alice Ames next.") == {"alice ames"}
    assert NAMES.named_in("alice ames") == set()  # lower case: a search's words, not a name
    assert NAMES.named_in("Iron is a metal; the film director used iron.") == set()  # sentence start, lower case
    assert NAMES.named_in("made of Iron") == {"iron"}
    assert NAMES.named_in("She was a Film director.") == set()  # "director" is not capitalized
    assert NAMES.named_in("in 1985") == set()


def test_unseen_entities_reads_the_prompt_and_earlier_observations_only():
    early = conversation(("search", "Alice Ames", BORN), ("answer", "First Light"))
    assert unseen_entities(early, NAMES) == {"alice ames"}  # named before any observation showed it
    late = conversation(("search", "who was born in Springfield", BORN), ("search", "Alice Ames", FILM))
    assert unseen_entities(late, NAMES) == set()


def test_imported_shapes_without_ids_still_get_labels():
    searchr1 = '"First Light"\nFirst Light is a drama film.'
    messages = conversation(("search", "first light", f'Doc 1(Title: "First Light") {searchr1}'), ("answer", "x"))
    reading = read_trajectory(messages, ["First Light"])
    assert reading.step_labels == ["exploration"] and reading.answer_seen_at == 1

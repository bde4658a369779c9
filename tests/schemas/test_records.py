import pytest
from pydantic import ValidationError

from synth.schemas import ChatMessage, FilterVerdict, FunctionCall, PassRate, SolverAttempt, ToolCall, Trajectory


def test_unknown_field_is_rejected_and_named(make_item):
    with pytest.raises(ValidationError) as error:
        make_item(colour="red")
    assert "colour" in str(error.value)


def test_hops_never_exceed_the_construction_path(make_item):
    with pytest.raises(ValidationError, match="construction path has only 2 edges"):
        make_item(hops=3)
    assert make_item(hops=1).hops == 1  # effective hops: an appended cue may shorten the chain


def test_records_are_immutable(make_item):
    item = make_item()
    with pytest.raises(ValidationError):
        item.question = "changed"
    assert item.model_copy(update={"question": "changed?"}).question == "changed?"


def test_answers_lists_canonical_answer_first_without_duplicates(make_item):
    item = make_item(answer="Paris", aliases=["Paris", "City of Light"])
    assert item.answers == ["Paris", "City of Light"]


def test_blank_question_is_rejected(make_item):
    with pytest.raises(ValidationError, match="question"):
        make_item(question="   ")


def test_tool_call_message_may_have_null_content_and_json_string_arguments(make_item):
    message = ChatMessage(
        role="assistant",
        content=None,
        tool_calls=[ToolCall(id="call_1", function=FunctionCall(name="search", arguments='{"query": "x"}'))],
    )
    assert message.tool_calls[0].function.arguments == '{"query": "x"}'


def test_null_content_without_tool_calls_is_rejected(make_item):
    with pytest.raises(ValidationError, match="content may be null"):
        ChatMessage(role="assistant", content=None)


def test_tool_message_needs_the_call_id(make_item):
    with pytest.raises(ValidationError, match="tool_call_id"):
        ChatMessage(role="tool", content="result")


def test_repeated_call_ids_within_a_trajectory_are_allowed(make_item):
    call = ToolCall(id="call_0", function=FunctionCall(name="search", arguments="{}"))
    messages = [
        ChatMessage(role="user", content="q"),
        ChatMessage(role="assistant", tool_calls=[call]),
        ChatMessage(role="tool", tool_call_id="call_0", content="r1"),
        ChatMessage(role="assistant", tool_calls=[call]),
        ChatMessage(role="tool", tool_call_id="call_0", content="r2"),
        ChatMessage(role="assistant", content="<answer>x</answer>"),
    ]
    trajectory = Trajectory(id="t", item_id="i", role="teacher", model="m", messages=messages)
    assert len(trajectory.messages) == 6


def test_dropped_verdict_needs_a_snake_case_reason(make_item):
    with pytest.raises(ValidationError, match="needs a reason"):
        FilterVerdict(item_id="i", filter="leakage", kept=False)
    with pytest.raises(ValidationError, match="snake_case"):
        FilterVerdict(item_id="i", filter="leakage", kept=False, reason="Answer Leaked")
    assert (
        FilterVerdict(item_id="i", filter="leakage", kept=False, reason="answer_in_question").reason
        == "answer_in_question"
    )


def test_attempt_without_answer_cannot_be_correct(make_item):
    with pytest.raises(ValidationError, match="without an answer"):
        SolverAttempt(id="a", item_id="i", solver="s", model="m", condition="search", sample_index=0, correct=True)


def test_pass_rate_cannot_exceed_attempts(make_item):
    with pytest.raises(ValidationError, match="exceeds attempts"):
        PassRate(solver="s", condition="closed_book", attempts=2, correct=3)
    assert PassRate(solver="s", condition="closed_book", attempts=4, correct=1).rate == 0.25

"""Checks of a trajectory beyond its final answer: a right answer is not a good demonstration when
the agent never saw it, searched for a name nothing had shown it, or searched the same thing twice.

    answer_not_grounded      the final answer (or an alias it matches) appears in no observation
                             before the answer, though the item needs searching (see `allows_closed_book`)
    unseen_entity            an assistant turn names an entity of the world (in a call's arguments or
                             in its text, reasoning aside) that neither the prompt nor any earlier
                             observation contains (`synth.kg.name_mentions` says what counts as naming)
    repeated_call            the same tool with the same arguments twice
    calls_after_answer_seen  more than `calls_after_answer_seen` calls after the observation that
                             first showed the answer (verification has its place; a long tail is waste)

Every check's finding is stored on the trajectory (`Trajectory.findings`) whether or not it rejects
it; `synth.solving.rejection` rejects a correct rollout by the first enabled one that applies.
"""

import re
from typing import Literal, get_args

from synth.kg.name_mentions import WorldNames
from synth.schemas import ChatMessage, Item
from synth.solving.trajectory_reading import FINAL_TOOLS, Reading, text_words

TrajectoryCheck = Literal["answer_not_grounded", "unseen_entity", "repeated_call", "calls_after_answer_seen"]
TRAJECTORY_CHECKS: tuple[TrajectoryCheck, ...] = get_args(TrajectoryCheck)

_ANSWER_TAG = re.compile(r"<answer>.*?(</answer>|$)", re.DOTALL)

CLOSED_BOOK = "closed_book"
"""An item whose metadata sets this true may be answered without a search (no grounding is asked)."""


def allows_closed_book(item: Item, min_tool_calls: int) -> bool:
    """A run that keeps closed-book answers (`min_tool_calls: 0`), or an item marked `closed_book`."""
    return min_tool_calls == 0 or bool(item.metadata.get(CLOSED_BOOK))


def findings(
    messages: list[ChatMessage],
    final_answer: str | None,
    reading: Reading,
    names: WorldNames | None,
    closed_book: bool,
    calls_after_answer_seen: int,
) -> list[str]:
    """Every check in TRAJECTORY_CHECKS that applies, in that order (`reading` found the answer under
    every name it may have); `names`: the world's names (None: `unseen_entity` is not checked)."""
    found = []
    if final_answer is not None and not closed_book and reading.answer_seen_at is None:
        found.append("answer_not_grounded")
    if names is not None and unseen_entities(messages, names):
        found.append("unseen_entity")
    if reading.repeated:
        found.append("repeated_call")
    if reading.answer_seen_at is not None and len(reading.calls) - reading.answer_seen_at > calls_after_answer_seen:
        found.append("calls_after_answer_seen")
    return found


def unseen_entities(messages: list[ChatMessage], names: WorldNames) -> set[str]:
    """World names an assistant turn writes before the prompt or an observation showed them (its
    final answer aside: `answer_not_grounded` judges that)."""
    shown = ""
    unseen: set[str] = set()
    for message in messages:
        if message.role != "assistant":
            shown += text_words(message.content or "")
            continue
        said = [_ANSWER_TAG.sub(" ", message.content or "")]
        said += [call.function.arguments for call in message.tool_calls or [] if call.function.name not in FINAL_TOOLS]
        unseen |= {name for name in names.named_in("\n".join(said)) if f" {name} " not in shown}
    return unseen


def answer_names(item: Item, final_answer: str | None, correct: bool) -> list[str]:
    """What the answer may be called in an observation: the item's answers, and the final answer
    itself when it was judged right (in words of its own: a shorter or fuller form)."""
    return [item.answer, *item.aliases, *([final_answer] if correct and final_answer else [])]

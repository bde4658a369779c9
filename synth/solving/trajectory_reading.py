"""A stored trajectory read call by call: each call of the world's tools, what its observation showed
that no earlier one had, when the answer first appeared, and a step label per call.

Step labels (Fathom-DeepResearch-style step-level labels; the rules, in the order applied):

    redundant     the call repeats an earlier one (same tool, same arguments up to case and spacing),
                  or its observation shows nothing an earlier observation had not (no new document:
                  by id, else by title and text; no new line for tools that return plain text)
    verification  the answer was already shown by an earlier observation and the call names it:
                  re-checking a known candidate
    exploration   otherwise: the call brings new information

The final-answer tool (the contract's `answer`) is not a call of the world's tools and gets no label,
as `Trajectory.num_tool_calls` does not count it. Reads every protocol's stored shape alike (tool
calls answered by tool messages), imported trajectories included.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from synth.contract.observations import parse_search
from synth.contract.portable import normalize_answer
from synth.kg.names import token_sequence
from synth.schemas import ChatMessage
from synth.schemas.trajectory import StepLabel

FINAL_TOOLS = frozenset({"answer"})
"""Tools that deliver the result rather than ask the world."""

STEP_LABELS: tuple[StepLabel, ...] = ("exploration", "verification", "redundant")


@dataclass(frozen=True)
class WorldCall:
    """One call of the world's tools and the observation that answered it."""

    number: int
    """1-based among the trajectory's world calls."""
    message: int
    """Index of the assistant message that made it."""
    slot: int
    """Its place among that message's calls."""
    tool: str
    arguments: str
    """The arguments, canonical: a key-sorted JSON object with strings case-folded and spaced once."""
    observation: str
    """The answering tool message's text ("" when none answered it)."""
    units: frozenset[str] = field(default_factory=frozenset)
    """What the observation showed: its documents (id, else title and text), else its lines."""


def canonical_arguments(arguments: str) -> str:
    """Arguments as compared for repeats: "Who  directed X" and "who directed x" are one search."""
    try:
        value = json.loads(arguments)
    except (json.JSONDecodeError, TypeError):
        return " ".join(str(arguments).casefold().split())

    def folded(entry):
        if isinstance(entry, str):
            return " ".join(entry.casefold().split())
        if isinstance(entry, dict):
            return {key: folded(item) for key, item in entry.items()}
        if isinstance(entry, list):
            return [folded(item) for item in entry]
        return entry

    return json.dumps(folded(value), sort_keys=True, ensure_ascii=False)


def observation_units(text: str, style: str | None = None) -> frozenset[str]:
    """The pieces of information an observation shows: each search result's document (by id where
    the rendering has one), else each non-empty line. `style`: the contract's rendering of results,
    when known (else every style is tried)."""
    found = parse_search(text, style)
    if found is not None:
        documents = [document for query in found[1] for document in query]
        return frozenset(
            document["id"] or f"{normalize_answer(document['title'])}\n{normalize_answer(document['text'])}"
            for document in documents
        )
    return frozenset(normalize_answer(line) for line in text.splitlines() if normalize_answer(line))


def world_calls(
    messages: list[ChatMessage], final_tools: frozenset[str] = FINAL_TOOLS, style: str | None = None
) -> list[WorldCall]:
    """Every call of the world's tools in order, each with the tool message that answered it (ids
    may repeat: a tool message answers the oldest open call with its id; `style`: as in
    `observation_units`)."""
    answers: dict[int, str] = {}
    open_calls: dict[str, list[tuple[int, int]]] = {}
    made: list[tuple[int, int, ChatMessage, int]] = []
    for position, message in enumerate(messages):
        for slot, call in enumerate(message.tool_calls or []):
            key = len(made)
            made.append((key, position, message, slot))
            open_calls.setdefault(call.id, []).append((key, position))
        if message.role == "tool" and open_calls.get(message.tool_call_id or ""):
            key, _ = open_calls[message.tool_call_id or ""].pop(0)
            answers[key] = message.content or ""
    calls = []
    for key, position, message, slot in made:
        call = (message.tool_calls or [])[slot]
        if call.function.name in final_tools:
            continue
        observation = answers.get(key, "")
        calls.append(
            WorldCall(
                number=len(calls) + 1,
                message=position,
                slot=slot,
                tool=call.function.name,
                arguments=canonical_arguments(call.function.arguments),
                observation=observation,
                units=observation_units(observation, style),
            )
        )
    return calls


@lru_cache(maxsize=4096)
def text_words(text: str) -> str:
    """`token_sequence` of a message's text, kept: the checks read each observation several times."""
    return token_sequence(text)


def mentions(text: str, names: list[str]) -> bool:
    """Whether `text` contains one of `names` as whole words (case, punctuation and articles ignored;
    "Quaid's" holds "Quaid")."""
    haystack = text_words(text)
    return any(needle in haystack for name in names if (needle := text_words(name)))


@dataclass(frozen=True)
class Reading:
    """What a trajectory's calls did."""

    calls: list[WorldCall]
    step_labels: list[StepLabel]
    """One of STEP_LABELS per world call, in order."""
    answer_seen_at: int | None
    """The number of the call whose observation first showed the answer (None: none did)."""
    repeated: int
    """Calls that repeat an earlier call exactly (same tool, same canonical arguments)."""


def read_trajectory(messages: list[ChatMessage], answers: list[str], style: str | None = None) -> Reading:
    """Step labels and the answer's first sighting for a trajectory whose accepted answers are `answers`
    (the item's answer and aliases, and the trajectory's own final answer where it matches them);
    `style`: how its search results are rendered, when its contract is known."""
    calls = world_calls(messages, style=style)
    seen_calls: set[tuple[str, str]] = set()
    seen_units: set[str] = set()
    labels: list[StepLabel] = []
    answer_seen_at: int | None = None
    repeated = 0
    for call in calls:
        key = (call.tool, call.arguments)
        repeat = key in seen_calls
        repeated += repeat
        new = call.units - seen_units
        if repeat or not new:
            labels.append("redundant")
        elif answer_seen_at is not None and mentions(call.arguments, answers):
            labels.append("verification")
        else:
            labels.append("exploration")
        seen_calls.add(key)
        seen_units |= call.units
        if answer_seen_at is None and mentions(call.observation, answers):
            answer_seen_at = call.number
    return Reading(calls, labels, answer_seen_at, repeated)


def labels_by_call(messages: list[ChatMessage], step_labels: Sequence[str]) -> dict[tuple[int, int], str]:
    """(message index, place among its calls) -> the stored step label of that world call: what a
    page showing the conversation writes beside each call."""
    return {(call.message, call.slot): label for call, label in zip(world_calls(messages), step_labels, strict=False)}

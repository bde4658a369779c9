"""What the trajectory exports (sft, sft-chatml, sharegpt, searchr1-sft, dpo) share: which
trajectories they read, the contract they render them under, and the OpenAI message shape.

Teacher rollouts are the training targets (or, with `--role proposer`, self-play proposals whose
question passed every gate); solver trajectories of the panel sit in the same table and are never
exported as SFT or DPO data. Every trajectory goes through `synth.contract.render.render`, so the
formats show the same prompt, tools, observations and final answer; what a contract or format
cannot show is skipped and counted (`Skipped`), never half-written.
"""

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from synth.contract import AgentContract, get_contract
from synth.contract.render import UNKNOWN_RESULTS, Conversation, Unrenderable, render
from synth.errors import ConfigError, NotFoundError
from synth.schemas import ChatMessage, Trajectory
from synth.schemas.trajectory import PATH_TEACHER
from synth.search.proposing import PROPOSING
from synth.store.dialects import looks_like_tool_use
from synth.store.export.context_rows import as_seen
from synth.store.export.options import ExportRequest
from synth.store.export.prompts import load_template
from synth.store.export.prompts import render as render_template
from synth.store.export.sink import json_list_type
from synth.store.reader import iter_records, read_columns

MESSAGES = json_list_type()
"""Messages (and tool schemas) in Parquet: one JSON object each, which `datasets` (>= 4.7, TRL's
minimum) reads back as objects, so tool-call arguments stay objects and no struct pads a message
with the keys of others."""
DATASETS_NOTE = (
    "load with datasets >= 4.7 (TRL's minimum): older datasets (LLaMA-Factory pins <= 4.0) cannot read the "
    ".parquet's JSON columns and pad .jsonl tool-call arguments with other tools' keys set to null; for "
    "LLaMA-Factory export --format sharegpt"
)
"""Measured: datasets 4.6.1 and 4.0.0 fail or pad, 4.7.0 reads both files as written."""
PLAIN_MESSAGES = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))
"""Role/content-only chat (ChatML and Search-R1 text)."""


def require_trajectories(request: ExportRequest, fmt: str) -> None:
    if request.version.row_counts.get("trajectories", 0) == 0:
        raise NotFoundError(
            f"{request.version.ref} has no trajectories, so there is nothing to export as {fmt}; "
            "export its items with --format verl or --format jsonl instead"
        )


def export_contract(request: ExportRequest, default: str | None = None) -> AgentContract | None:
    """The contract the user asked for, else the format's default (None: each trajectory's own)."""
    name = request.contract or default
    return get_contract(name) if name else None


@dataclass
class Skipped:
    """Trajectories left out, by reason, and tool calls whose arguments stay strings."""

    reasons: Counter = field(default_factory=Counter)
    string_arguments: int = 0
    as_recorded: int = 0
    """Imported trajectories whose search results are in no style synth knows, exported as recorded."""
    parallel_split: int = 0
    """sharegpt: assistant turns with parallel calls written as one call (and result) per turn."""
    with_tool_use: int = 0
    """Rendered trajectories that used tools: world calls, or text that looks like tool use."""
    calls_out: int = 0
    """World calls (not the final answer's) in the rendered conversations."""

    def count_calls(self, trajectory: Trajectory, conversation: Conversation) -> None:
        used = world_calls(trajectory.messages) or any(
            looks_like_tool_use(message.content) for message in trajectory.messages if message.role == "assistant"
        )
        self.with_tool_use += bool(used)
        self.calls_out += world_calls(conversation.messages)

    def require_calls(self, request: ExportRequest, fmt: str) -> None:
        """Refuse an export that would drop every call: a tool-use dataset without its calls would
        teach plain answering, and a note is too easy to miss."""
        if self.with_tool_use and not self.calls_out and not request.allow_dropping_calls:
            raise ConfigError(
                f"{request.version.ref} as {fmt} would drop every tool call: {self.with_tool_use} trajectories used "
                "tools but no call comes out (text that looks like tool use was imported without calls: re-import "
                "with the --format its dialect needs, e.g. sft-chatml for <tool_call> text); pass "
                "--allow-dropping-calls to write them anyway"
            )

    def notes(self, what: str = "selected trajectories") -> list[str]:
        notes = []
        if self.reasons:
            listed = ", ".join(f"{reason}: {count}" for reason, count in self.reasons.most_common())
            notes.append(
                f"skipped {sum(self.reasons.values())} {what} that cannot be shown faithfully ({listed})"
                + (
                    "; --keep-malformed writes those with malformed calls"
                    if "malformed_tool_call" in self.reasons
                    else ""
                )
            )
        if self.as_recorded:
            notes.append(
                f"{self.as_recorded} imported trajectories keep their own search results (in no style synth can "
                "re-render, e.g. ReAct or R1-Searcher observations) and their own tools, as recorded"
            )
        if self.parallel_split:
            notes.append(
                f"{self.parallel_split} turns with parallel calls are written one call per function_call turn, each "
                "followed by its own observation (one observation cannot hold several results in a way every "
                "LLaMA-Factory template renders)"
            )
        if self.string_arguments:
            notes.append(
                f"{self.string_arguments} tool calls have malformed arguments, written as the strings the model "
                "produced"
            )
        return notes


def training_trajectories(request: ExportRequest, condition: str) -> Iterator[Trajectory]:
    """Trajectories of the requested role (teacher by default) matching the SQL `condition` and
    the user's --where, in stored order; with the reasoning `--reasoning` keeps, and as their model saw
    them under `--context seen`."""
    selection = request.predicate("item_id")
    where = f"role = '{request.role}' and ({condition})" + (f" and {selection}" if selection else "")
    if request.procedural != "include":  # the path teacher's model-free demonstrations (synth.generators.path_teacher)
        where += f" and model {'=' if request.procedural == 'only' else '!='} '{PATH_TEACHER}'"
    for stored in iter_records(request.settings, request.version, "trajectories", where):
        for trajectory in as_seen(stored) if request.context == "seen" else [stored]:
            yield with_reasoning(trajectory, request.reasoning)


def with_reasoning(trajectory: Trajectory, mode: str) -> Trajectory:
    """The trajectory with the reasoning of the turns `mode` keeps: every one (keep-all), the last
    assistant turn's (keep-last: what a model trained on it writes only before its answer), or none."""
    if mode == "keep-all":
        return trajectory
    last = max((index for index, message in enumerate(trajectory.messages) if message.role == "assistant"), default=-1)
    messages = [
        message.model_copy(update={"reasoning_content": None})
        if message.reasoning_content and (mode == "drop" or index != last)
        else message
        for index, message in enumerate(trajectory.messages)
    ]
    return trajectory.model_copy(update={"messages": messages})


def item_questions(request: ExportRequest) -> dict[str, str]:
    return dict(read_columns(request.settings, request.version, "items", ["id", "question"]))


def rendered(
    request: ExportRequest, condition: str, contract: AgentContract | None, skipped: Skipped, user_prompt=None
) -> Iterator[tuple[Trajectory, Conversation]]:
    """Matching trajectories rendered under `contract`; the unrenderable are counted in `skipped`.
    `--prompt-template` makes the question turn, as it does in the RL exports."""
    questions = item_questions(request)
    if user_prompt is None and request.prompt_template is not None:
        template = load_template(request.prompt_template, None) or "{question}"
        user_prompt = lambda question: render_template(template, question)  # noqa: E731
    for trajectory in training_trajectories(request, condition):
        if not request.keep_malformed and malformed_calls(trajectory):
            skipped.reasons["malformed_tool_call"] += 1  # a trainer would learn the broken call
            continue
        question = questions.get(trajectory.item_id) or _first_user_text(trajectory)
        try:
            conversation = render(trajectory, contract, question, user_prompt, proposer_system)
        except Unrenderable as reason:
            conversation = None
            if contract is not None and "source" in trajectory.metadata and str(reason) == UNKNOWN_RESULTS:
                try:  # results from another engine: shown as the agent saw them, and said so in the notes
                    conversation = render(trajectory, None, question, user_prompt, proposer_system)
                    skipped.as_recorded += 1
                except Unrenderable as recorded:
                    reason = recorded
            if conversation is None:
                skipped.reasons[str(reason)] += 1
                continue
        skipped.count_calls(trajectory, conversation)
        yield trajectory, conversation


def malformed_calls(trajectory: Trajectory) -> int:
    """Tool calls of the trajectory whose arguments are no JSON object."""
    count = 0
    for message in trajectory.messages:
        for call in message.tool_calls or []:
            try:
                count += not isinstance(json.loads(call.function.arguments), dict)
            except json.JSONDecodeError:
                count += 1
    return count


def world_calls(messages: list[ChatMessage]) -> int:
    """Calls to the world's tools: every tool call but a final `answer` call."""
    return sum(call.function.name != "answer" for message in messages for call in message.tool_calls or [])


def proposer_system(contract: AgentContract) -> str:
    """The self-play proposer's system prompt for a contract's way of finishing."""
    return PROPOSING.tags_system(contract) if contract.finish == "tag" else PROPOSING.native_system(contract)


def _first_user_text(trajectory: Trajectory) -> str:
    return next((message.content or "" for message in trajectory.messages if message.role == "user"), "")


def arguments_value(arguments: str, as_object: bool, skipped: Skipped) -> Any:
    """Tool-call arguments as chat templates expect them: the JSON object (so a template's `tojson`
    encodes them once), or the string with `--arguments string`. A malformed string stays a string."""
    if not as_object:
        return arguments
    try:
        value = json.loads(arguments)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        skipped.string_arguments += 1
        return arguments
    return value


def openai_message(message: ChatMessage, as_object: bool, skipped: Skipped) -> dict[str, Any]:
    """OpenAI shape: optional keys omitted, but `content` always present (null on tool-call turns)."""
    payload = {"role": message.role, "content": message.content, **message.model_dump(exclude_none=True)}
    if message.tool_calls:
        payload["tool_calls"] = [
            {
                **call.model_dump(),
                "function": {
                    "name": call.function.name,
                    "arguments": arguments_value(call.function.arguments, as_object, skipped),
                },
            }
            for call in message.tool_calls
        ]
    return payload


def openai_messages(messages: list[ChatMessage], request: ExportRequest, skipped: Skipped) -> list[dict[str, Any]]:
    return [openai_message(message, request.arguments == "object", skipped) for message in messages]


def nothing_to_export(request: ExportRequest, fmt: str, skipped: Skipped) -> None:
    """An export with no rows is an error that says why, not an empty file."""
    if skipped.reasons:
        why = "every matching trajectory was skipped: " + "; ".join(skipped.notes())
    else:
        why = f"no {request.role} trajectory is selected in {request.selection()}"
        if request.role == "teacher" and not request.where:
            why += " (teachers run with --param distill.enabled=true; see `synth datasets show` for their rejections)"
    raise NotFoundError(f"{request.version.ref} has nothing to export as {fmt}: {why}")


def require_tag_finish(contract: AgentContract | None, fmt: str) -> None:
    """Formats whose protocol finishes with <answer> tags cannot show a contract that answers by a call."""
    if contract is not None and contract.finish != "tag":
        raise ConfigError(
            f"--format {fmt} finishes with <answer> tags, but the {contract.name} contract finishes with an "
            "answer call; choose a contract that answers in tags (e.g. --contract synth)"
        )

"""A stored trajectory as a training conversation under an agent contract.

Every trajectory export (sft, sft-chatml, sharegpt, searchr1-sft, dpo) goes through `render`, so
they all show the same prompt, tools, observations and final answer, and `--contract` changes all
of them together. Under a contract the conversation is rebuilt from what the agent did:

- the prompt is the contract's system prompt and question (the agent's own prompt was a request
  detail: demonstrations, protocol instructions, hints);
- each call is mapped onto the contract's tools (`search(query)` <-> `search(query_list=[query])`);
- each search result is shown in the contract's style (read back with `observations.parse_search`);
- the answer is finished the contract's way: `<answer>X</answer>` in a last turn without calls, or an
  `answer` call, its acknowledgement and a closing `<answer>X</answer>` turn.

What cannot be shown faithfully raises `Unrenderable` with the reason (a tool the contract lacks, a
malformed call that would need remapping, results without the document ids a style shows, a
conversation that does not end with an answer), and the export skips and counts it.

Trajectories imported from elsewhere have no recorded contract; without `--contract` they are kept
as recorded (their own prompt, tools and observations), still refused if they end on a tool turn.
"""

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from synth.contract.contracts import ANSWER_TOOL, DEFAULT, AgentContract, get_contract
from synth.contract.observations import parse_search
from synth.contract.portable import ANSWER_RECORDED, extract_tagged
from synth.errors import ConfigError
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Trajectory


class Unrenderable(Exception):
    """The trajectory cannot be shown under the contract; the message says why (it is counted)."""


@dataclass(frozen=True)
class Conversation:
    messages: list[ChatMessage]
    tools: list[dict]


@dataclass(frozen=True)
class Final:
    """How an agent delivers its result: the tool and its argument, or the tag."""

    tool: str
    argument: str
    tag: str


ANSWER = Final("answer", "answer", "answer")
PROPOSAL = Final("propose", "question", "question")
"""A self-play proposer's result: the question it wrote."""


UNKNOWN_RESULTS = "search results in an unknown format"
"""Why a result no observation style parses cannot be re-rendered (an exporter may show it as recorded)."""


def recorded_contract(trajectory: Trajectory) -> AgentContract | None:
    """The contract the agent ran under; None for imported trajectories (their own conventions)."""
    name = trajectory.metadata.get("contract")
    if name:
        try:
            return get_contract(name)
        except ConfigError:
            raise Unrenderable(f"recorded under an unknown contract {name}") from None
    if "source" in trajectory.metadata:
        return None
    return DEFAULT  # made by synth before contracts were recorded, with synth's tools and observations


def render(
    trajectory: Trajectory,
    contract: AgentContract | None,
    question: str,
    user_prompt: Callable[[str], str] | None = None,
    proposer_system: Callable[[AgentContract], str] | None = None,
) -> Conversation:
    """`trajectory` under `contract` (None: the contract it was recorded under); `user_prompt` turns
    the question into the user turn (default: the contract's "Question: ..."). A self-play proposal
    keeps its task as the user turn, under the system prompt `proposer_system` gives for the contract."""
    source = recorded_contract(trajectory)
    target = contract or source
    if target is None:
        return _as_recorded(trajectory)
    if trajectory.role == "proposer":
        if proposer_system is None:
            raise Unrenderable("a proposal needs the proposer's system prompt")
        task = next(message for message in trajectory.messages if message.role == "user")
        final_schema = next((tool for tool in trajectory.tools if tool["function"]["name"] == PROPOSAL.tool), None)
        prompt = [ChatMessage(role="system", content=proposer_system(target)), task]
        return _Renderer(target, source, PROPOSAL).conversation(trajectory, prompt, final_schema)
    prompt = [
        ChatMessage(role="system", content=target.system_prompt),
        ChatMessage(role="user", content=(user_prompt or target.user_prompt)(question)),
    ]
    return _Renderer(target, source, ANSWER).conversation(trajectory, prompt, ANSWER_TOOL)


CONTINUES = "continues"
"""Metadata key of a row that stops at a call rather than the answer: one segment of a longer run,
written as its model saw it (`--context seen`); every other row must end with the answer."""


def _as_recorded(trajectory: Trajectory) -> Conversation:
    _require_final_answer(trajectory.messages, bool(trajectory.metadata.get(CONTINUES)))
    return Conversation(list(trajectory.messages), list(trajectory.tools))


def _require_final_answer(messages: list[ChatMessage], continues: bool = False) -> None:
    last = messages[-1]
    if last.role == "tool":
        raise Unrenderable("ends on a tool turn")
    if last.role != "assistant" or (last.tool_calls and not continues):
        raise Unrenderable("does not end with an answer")


class _Renderer:
    def __init__(self, target: AgentContract, source: AgentContract | None, final: Final):
        self.target = target
        self.source_style = source.observation if source else None
        self.source_argument = source.search_argument if source else "query"  # imported: the common shape
        self.final = final
        self._answered: str | None = None
        """The answer the conversation has already given, once it has."""

    def conversation(
        self, trajectory: Trajectory, prompt: list[ChatMessage], final_schema: dict | None
    ) -> Conversation:
        if self.target.finish == "call" and final_schema is None:
            raise Unrenderable(f"no {self.final.tool} tool to finish with")
        messages = list(prompt)
        pending: list[tuple[ToolCall, str | None]] = []  # calls awaiting their result, with the answer they carry
        for message in _body(trajectory.messages):
            if message.role == "assistant" and self._restates_answer(message):
                continue  # a closing turn repeating the answer a call gave: trainers would learn it twice
            if message.role == "assistant":
                pending = self._assistant(message, messages)
            elif message.role == "tool":
                self._tool(message, pending, messages)
            else:
                messages.append(message)  # a corrective user turn of the agent loop
        _require_final_answer(messages, bool(trajectory.metadata.get(CONTINUES)))
        finish = [final_schema] if self.target.finish == "call" and final_schema is not None else []
        return Conversation(messages, [*self.target.tools, *finish])

    def _restates_answer(self, message: ChatMessage) -> bool:
        """Whether `message` only says again, in the final tag, the answer already given."""
        tag = self.final.tag
        return (
            self._answered is not None
            and not message.tool_calls
            and extract_tagged(message.content, tag) == self._answered
            and not (_without_tag(message.content or "", tag) or "").strip()
        )

    def _assistant(self, message: ChatMessage, out: list[ChatMessage]) -> list[tuple[ToolCall, str | None]]:
        calls, answers = [], []
        final = self.final
        for call in message.tool_calls or []:
            if call.function.name == final.tool:
                answer = _string_argument(call, final.argument)
                answers.append(answer)
                calls.append((call, answer))
            else:
                calls.append((self._world_call(call), None))
        recorded = list(calls)  # the stored tool results answer these, in order
        content = message.content
        if not answers and self.target.finish == "call" and (answer := extract_tagged(content, final.tag)) is not None:
            # a text answer becomes the contract's final call
            content = _without_tag(content or "", final.tag)
            arguments = json.dumps({final.argument: answer}, ensure_ascii=False)
            call = ToolCall(
                id=f"call_{final.tool}_{len(out)}", function=FunctionCall(name=final.tool, arguments=arguments)
            )
            calls.append((call, answer))
            answers.append(answer)
        if answers and len(calls) > 1:
            raise Unrenderable("answers in the same turn as another call")
        if answers or (said := extract_tagged(content, final.tag)) is not None:
            self._answered = answers[0] if answers else said
        if answers and self.target.finish == "tag":
            text = f"<{final.tag}>{answers[0]}</{final.tag}>"
            out.append(
                message.model_copy(update={"content": f"{content}\n{text}" if content else text, "tool_calls": None})
            )
            return recorded  # the stored acknowledgement of an answer call is dropped
        out.append(message.model_copy(update={"content": content, "tool_calls": [call for call, _ in calls] or None}))
        if answers:  # finish == "call": the acknowledgement and the closing turn
            acknowledgement = ANSWER_RECORDED if final is ANSWER else f"{final.argument.capitalize()} recorded."
            out.append(ChatMessage(role="tool", tool_call_id=calls[0][0].id, name=final.tool, content=acknowledgement))
            out.append(ChatMessage(role="assistant", content=f"<{final.tag}>{answers[0]}</{final.tag}>"))
        return recorded

    def _world_call(self, call: ToolCall) -> ToolCall:
        name = call.function.name
        if name not in self.target.tool_names:
            raise Unrenderable(f"calls {name}, which the {self.target.name} contract does not have")
        if name != "search":
            return call
        wanted = self.target.search_argument
        try:
            arguments = json.loads(call.function.arguments)
        except json.JSONDecodeError:
            arguments = None
        if not isinstance(arguments, dict):
            if self.source_argument == wanted:
                return call  # nothing to map: a malformed call stays as the model wrote it
            raise Unrenderable("malformed search call")
        if wanted in arguments:
            return call
        if wanted == "query_list" and isinstance(arguments.get("query"), str):
            mapped = {"query_list": [arguments["query"]]}
        elif wanted == "query" and isinstance(arguments.get("query_list"), list) and len(arguments["query_list"]) == 1:
            mapped = {"query": arguments["query_list"][0]}
        else:
            raise Unrenderable(f"search arguments the {self.target.name} contract cannot express")
        return call.model_copy(
            update={"function": FunctionCall(name="search", arguments=json.dumps(mapped, ensure_ascii=False))}
        )

    def _tool(self, message: ChatMessage, pending: list[tuple[ToolCall, str | None]], out: list[ChatMessage]) -> None:
        index = next(
            (i for i, (call, _) in enumerate(pending) if call.id == message.tool_call_id), 0 if pending else None
        )
        if index is None:
            raise Unrenderable("a tool result without a call")
        call, answer = pending.pop(index)
        if answer is not None:
            return  # an answer call's acknowledgement: written (or dropped) with the call itself
        content = message.content or ""
        if call.function.name == "search" and not content.startswith("error:"):
            content = self._observation(content)
        out.append(message.model_copy(update={"content": content, "tool_call_id": call.id}))

    def _observation(self, text: str) -> str:
        if self.source_style == self.target.observation:
            return text
        parsed = parse_search(text, self.source_style)
        if parsed is None:
            raise Unrenderable(UNKNOWN_RESULTS)
        style, results = parsed
        if style == self.target.observation:
            return text
        if self.target.observation == "synth" and any(document["id"] is None for hits in results for document in hits):
            raise Unrenderable(
                f"{style} search results carry no document ids, which the {self.target.name} contract shows"
            )
        return self.target.render_search(results)


def _body(messages: list[ChatMessage]) -> list[ChatMessage]:
    """What the agent did: everything after the first user turn (the question)."""
    first_user = next((index for index, message in enumerate(messages) if message.role == "user"), None)
    if first_user is None:
        raise Unrenderable("no question")
    return messages[first_user + 1 :]


def _string_argument(call: ToolCall, name: str) -> str:
    try:
        arguments = json.loads(call.function.arguments)
    except json.JSONDecodeError:
        arguments = None
    value = arguments.get(name) if isinstance(arguments, dict) else None
    if not isinstance(value, str) or not value.strip():
        raise Unrenderable(f"malformed {call.function.name} call")
    return " ".join(value.split())


def _without_tag(text: str, tag: str) -> str | None:
    stripped = re.sub(rf"\s*<{tag}>.*?</{tag}>\s*", " ", text, flags=re.DOTALL).strip()
    return stripped or None

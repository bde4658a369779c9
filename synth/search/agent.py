"""The search agent loop: a model answers a question by calling the world's tools until it answers.

The tools, how their results read and how an answer is finished come from the agent contract
(`synth.contract`, via `SearchTools.contract`), so the data an agent makes is what the exports and
the RL stage show. Three protocols, one stored record. `tags`: tool calls are written as text
(`<tool_call>{...}</tool_call>`, the Hermes/Qwen convention every chat model can follow) and the
final answer as `<answer>...</answer>`, as in Search-R1; tool results go back as user turns.
`native`: the request carries OpenAI tool schemas, the backend's tool-call channel returns the
calls, results go back as `tool` messages, and the answer comes the contract's way (`<answer>` in
text, or an `answer` call). `json`: every reply is one call `{"name", "arguments"}` held to the
tools' schemas by the backend's JSON-schema decoding (vLLM structured outputs, OpenAI
`response_format`); the final tool opens after `required_calls` calls and is the only choice on the
last turn, so small models that cannot write a call in text still act. Every protocol stores
OpenAI-shaped messages (assistant `tool_calls`, `tool` results), answers as the contract finishes.

Every rollout is its own coroutine: it sends its next turn the moment its tool results are in,
and the backend batches whatever is in flight (vLLM gathers concurrent requests, the HTTP backend
keeps up to its concurrency limit busy), so no rollout waits for the slowest of a turn. Every
turn is an ordinary cached request whose seed derives from the rollout and the turn, so results do
not depend on timing, and a rerun after a crash replays finished turns from the cache and spends
tokens only where it stopped.

A reply with neither a usable tool call nor an answer, or a call that cannot run as written,
gets a corrective observation (counted as malformed), as RL trainers do. A rollout ends at its
answer, at `max_turns`, past `max_context_tokens`, on a reply cut off by the token limit, or on a
failed model call.
"""

import asyncio
import json
import re
from dataclasses import dataclass, field

from synth.contract import DEFAULT, AgentContract
from synth.contract.contracts import ANSWER_TOOL
from synth.contract.portable import ANSWER_RECORDED, PROMPT_MESSAGES, extract_tagged
from synth.llm.client import LLMClient
from synth.llm.reasoning import REASONING_KEY
from synth.llm.responses import TRUNCATED_REASONING
from synth.llm.toolcalls import parse_tool_calls
from synth.llm.types import ChatRequest, ChatResponse, Completion, SamplingParams
from synth.schemas import ChatMessage, FunctionCall, ToolCall, Usage
from synth.search.budget import PANEL_AGENT, AgentBudget, RoleBudgets
from synth.search.context_policy import (
    ContextView,
    archived_view,
    summarized_view,
    summary_cut,
    summary_messages,
)
from synth.search.tools import SearchTools

_TOOL_PURPOSES = {
    "search": ("To search", "your query"),
    "open": ("To read a document in full", "an id from the results"),
}


def tool_instructions(contract: AgentContract) -> str:
    """One line per world tool of `contract`: how to call it as a <tool_call> tag (tags protocol)."""
    lines = []
    for tool in contract.tools:
        name = tool["function"]["name"]
        purpose, example = _TOOL_PURPOSES[name]
        argument = next(iter(tool["function"]["parameters"]["properties"]))
        value = [example] if tool["function"]["parameters"]["properties"][argument]["type"] == "array" else example
        lines.append(
            f"{purpose}, write: <tool_call>{json.dumps({'name': name, 'arguments': {argument: value}})}</tool_call>"
        )
    return "\n".join(lines)


def tools_sentence(contract: AgentContract) -> str:
    """ "Call `search` as often as you need and `open` to read a document in full." for the contract's tools."""
    return "Call `search` as often as you need" + (
        " and `open` to read a document in full." if "open" in contract.tool_names else "."
    )


def call_text(name: str, arguments: dict) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


@dataclass(frozen=True)
class Demonstration:
    """A worked rollout about invented entities, shown before the task when `demonstrate` is on (small
    models copy the call format from it). It is part of the request only, never of the stored
    trajectory, and is written in the contract's tools and observations."""

    task: str
    """The first user message."""
    searches: tuple[tuple[str, tuple[dict, ...]], ...]
    """(query, documents it finds) per search."""
    result: str
    """What the final tag carries."""

    def turns(self, contract: AgentContract, final_tag: str) -> list[dict]:
        turns = [{"role": "user", "content": self.task}]
        for query, documents in self.searches:
            value = [query] if contract.search_argument == "query_list" else query
            turns.append({"role": "assistant", "content": call_text("search", {contract.search_argument: value})})
            turns.append(
                {
                    "role": "user",
                    "content": f"<tool_response>\n{contract.render_search([list(documents)])}\n</tool_response>",
                }
            )
        turns.append({"role": "assistant", "content": f"<{final_tag}>{self.result}</{final_tag}>"})
        return turns


ANSWERING_DEMONSTRATION = Demonstration(
    task="Question: In which country was the director of the film Grey Harbour born?",
    searches=(
        (
            "Grey Harbour film director",
            ({"id": "demo#0", "title": "Grey Harbour", "text": "Grey Harbour was directed by Mira Olsen."},),
        ),
        ("Mira Olsen born", ({"id": "demo#1", "title": "Mira Olsen", "text": "Mira Olsen was born in Norway."},)),
    ),
    result="Norway",
)


def extract_answer(text: str | None) -> str | None:
    """The content of the last <answer> tag, or None."""
    return extract_tagged(text, "answer")


@dataclass(frozen=True)
class AgentTask:
    """What the agent is asked to produce and how it says it is done: an answer to a question
    (solvers, teachers) or, for a self-play proposer, a question for a given answer."""

    system: str
    """System prompt of the tags protocol; `{tools}` stands for the contract's call instructions."""
    call_system: str
    """System prompt when the result is delivered by calling `final_tool` (json protocol; native for a
    proposer); `{tools_sentence}` stands for what the contract's tools are for."""
    final_tag: str
    """Tag that carries the result in the tags protocol (`<answer>`)."""
    final_tool: dict
    """Tool that carries the result when it is a call (its schema)."""
    prompt_prefix: str = "Question: "
    """Put before the task text in the first user message."""
    demonstration: Demonstration | None = None
    answering: bool = False
    """An answer to a question: the agent contract decides how the native protocol finishes (an
    `<answer>` tag or the `answer` call) and what a json-protocol answer is stored as."""

    @property
    def final_argument(self) -> str:
        return next(iter(self.final_tool["function"]["parameters"]["required"]))

    def tags_system(self, contract: AgentContract) -> str:
        return self.system.replace("{tools}", tool_instructions(contract))

    def native_system(self, contract: AgentContract) -> str:
        return contract.system_prompt if self.answering else self._call_system(contract)

    def _call_system(self, contract: AgentContract) -> str:
        return self.call_system.replace("{tools_sentence}", tools_sentence(contract))

    def native_final_call(self, contract: AgentContract) -> bool:
        """Whether the native protocol offers `final_tool` (else the result comes as a tag in text)."""
        return not self.answering or contract.finish == "call"

    def json_system(self, contract: AgentContract) -> str:
        """System prompt of the json protocol: the call-delivering one plus the reply format."""
        tools = ", ".join(
            f"{name} ({next(iter(contract.tool(name)['function']['parameters']['properties']))})"
            for name in contract.tool_names
        )
        return (
            f"{self._call_system(contract)}\nReply with exactly one JSON object per turn, a tool call: "
            '{"name": "<tool>", "arguments": {...}}. '
            f"Tools: {tools}, {self.final_tool['function']['name']} ({self.final_argument})."
        )

    def demonstration_turns(self, contract: AgentContract) -> list[dict]:
        return self.demonstration.turns(contract, self.final_tag) if self.demonstration else []

    def json_demonstration(self, contract: AgentContract) -> list[dict]:
        """The demonstration with each call or final tag written as the JSON call it stands for."""
        turns = []
        for message in self.demonstration_turns(contract):
            if message["role"] == "assistant":
                final = extract_tagged(message["content"], self.final_tag)
                if final is not None:
                    content = json.dumps(
                        {"name": self.final_tool["function"]["name"], "arguments": {self.final_argument: final}}
                    )
                else:
                    content = re.sub(r"</?tool_call>", "", message["content"]).strip()
                message = {**message, "content": content}
            turns.append(message)
        return turns

    @property
    def correction(self) -> str:
        tag = self.final_tag
        return f"error: reply with exactly one <tool_call>{{...}}</tool_call> or with <{tag}>...</{tag}>."

    def native_correction(self, contract: AgentContract) -> str:
        tools = ", ".join(contract.tool_names)
        if self.native_final_call(contract):
            name = self.final_tool["function"]["name"]
            return f"error: call one of the tools ({tools}, {name}); to finish, call {name}."
        tag = self.final_tag
        return f"error: call one of the tools ({tools}); to finish, reply with <{tag}>...</{tag}>."


SYSTEM = (
    "You answer questions by searching a collection of documents.\n{tools}\n"
    "Search results come back inside <tool_response> tags. Search as often as you need, one call per reply.\n"
    "When you know the answer, reply with <answer>the answer</answer>: only the name, no explanation."
)
ANSWER_CALL_SYSTEM = (
    "You answer questions by searching a collection of documents with the tools you are given. "
    "{tools_sentence} When you know the answer, call `answer` with only the answer (usually a name)."
)
ANSWERING = AgentTask(
    SYSTEM, ANSWER_CALL_SYSTEM, "answer", ANSWER_TOOL, demonstration=ANSWERING_DEMONSTRATION, answering=True
)
"""Answer a question: what solvers and teachers do."""
DEMONSTRATION = ANSWERING.demonstration_turns(DEFAULT)
"""The answering demonstration under the default contract."""


@dataclass
class Rollout:
    """One agent run on one question."""

    question: str
    """The task text: a question to answer (or, for a proposer, what to write a question about)."""
    seed: int
    messages: list[ChatMessage] = field(default_factory=list)
    hint: str | None = None
    """Privileged guidance added to the system prompt of the requests only, never stored."""
    answer: str | None = None
    """The result: the final answer, or what the task's final tag or tool carried."""
    num_tool_calls: int = 0
    """Calls of the world's tools (search, open); the final answer or proposal, whatever the protocol, is not one."""
    queries: list[str] = field(default_factory=list)
    """Every search query that ran, in order."""
    retrieved: list[str] = field(default_factory=list)
    """Ids of every document a search returned or `open` read, in order (with repeats)."""
    malformed: int = 0
    usage: Usage = field(default_factory=Usage)
    context_tokens: int = 0
    """Prompt plus completion tokens of the latest turn: the trajectory's length so far."""
    reasoning_tokens: int = 0
    """Completion tokens spent reasoning, over all turns (the server's count, else an estimate)."""
    reasoning_turns: int = 0
    """Assistant turns that came with reasoning."""
    finish_reason: str | None = None
    """answered, turn_budget_exhausted, token_budget_exhausted, truncated, truncated_reasoning (cut off
    while thinking), or the model call's failure reason."""
    pending: list[tuple[int, ToolCall]] = field(default_factory=list, repr=False)
    """Tool calls of the latest turn not yet run: (index of their tool message, call)."""
    summaries: list[str] = field(default_factory=list)
    """The `summarize` policy's summaries, in order (synth.search.context_policy)."""
    summarized: int = 0
    """Messages before this index (after the prompt) are shown as the latest summary."""
    views: list[dict] = field(default_factory=list)
    """What each turn's request showed of the trajectory (`ContextView.record`), when a policy shaped it."""

    @property
    def done(self) -> bool:
        return self.finish_reason is not None

    def context_record(self, policy: str) -> dict | None:
        """What a stored trajectory keeps of how its context was shaped (None: every turn saw it all)."""
        if not self.views:
            return None
        return {"policy": policy, "views": self.views, "summaries": self.summaries}


def _prompt(messages: list[ChatMessage], tags: bool = True) -> list[dict]:
    """The stored conversation as a plain chat the model reads: tool calls back as tags (or as the
    bare JSON calls of the json protocol), tool results as user turns in <tool_response> tags
    (chat templates of small models know no tool role). An assistant turn's reasoning rides along
    under `reasoning_content`; the client sends it back as the model's declaration says."""
    prompt = []
    for message in messages:
        if message.role == "tool":
            prompt.append({"role": "user", "content": f"<tool_response>\n{message.content}\n</tool_response>"})
            continue
        content = message.content
        if message.role == "assistant" and message.tool_calls:
            template = (
                '<tool_call>{{"name": "{}", "arguments": {}}}</tool_call>'
                if tags
                else '{{"name": "{}", "arguments": {}}}'
            )
            calls = "".join(template.format(call.function.name, call.function.arguments) for call in message.tool_calls)
            content = f"{message.content or ''}{calls}".strip()
        turn = {"role": message.role, "content": content}
        if message.reasoning_content:
            turn[REASONING_KEY] = message.reasoning_content
        prompt.append(turn)
    return prompt


def openai_messages(messages: list[ChatMessage]) -> list[dict]:
    """The stored conversation as OpenAI chat messages (what a native tool-calling request carries)."""
    return [{"role": m.role, "content": m.content, **m.model_dump(mode="json", exclude_none=True)} for m in messages]


class SearchAgent:
    def __init__(
        self,
        client: LLMClient,
        tools: SearchTools,
        budget: AgentBudget = AgentBudget(),
        stage: str = "agent",
        log=None,
        task: AgentTask = ANSWERING,
        required_calls: int = 0,
        defaults: RoleBudgets = PANEL_AGENT,
    ):
        """`budget`: turns, tokens, sampling and protocol (`auto` resolves to native where the
        backend has a tool-call channel, else tags); unset keys come from the role's `defaults` for
        the client's model. `required_calls` (json protocol): tool calls a rollout must make before
        the final tool becomes available, e.g. the searches a proposer was asked for."""
        budget = defaults.resolve(budget, client)
        self.client = client
        self.task = task
        self.required_calls = required_calls
        self.log = log  # called with a line per turn, so long batches show progress
        self.budget = budget
        self.demonstrate = budget.demonstrations
        self.tools = tools
        self.max_turns: int = budget.max_turns or 1  # the role's defaults always set it
        self.max_tokens: int = budget.turn_tokens or 256  # the role's defaults always set these
        self.temperature: float = budget.temperature if budget.temperature is not None else 0.0
        self.stage = stage
        self.protocol = budget.resolved_protocol(client.native_tool_calls())
        self.max_context_tokens = budget.context_tokens
        self.context: str = budget.context or "none"
        self.keep_results: int = budget.kept_results()
        self.summarize_at: int = budget.summary_threshold()

    @property
    def contract(self) -> AgentContract:
        return self.tools.contract

    @property
    def final_is_call(self) -> bool:
        """Whether the result comes as a call of the task's final tool (else in its tag, in text)."""
        return self.protocol == "json" or (self.protocol == "native" and self.task.native_final_call(self.contract))

    @property
    def schemas(self) -> list[dict]:
        """The tools this agent offers, as OpenAI function schemas."""
        return self.tools.schemas + ([self.task.final_tool] if self.final_is_call else [])

    @property
    def recorded_schemas(self) -> list[dict]:
        """The tools its stored trajectories use: an answer stored as a tag needs no `answer` tool."""
        stored_as_tag = self.task.answering and self.contract.finish == "tag"
        return self.tools.schemas if stored_as_tag else self.schemas

    async def run(self, questions: list[tuple[str, int]], hints: list[str | None] | None = None) -> list[Rollout]:
        """One rollout per (question, seed), each its own coroutine: a rollout sends its next turn as
        soon as its tool results are in, so short rollouts finish while long ones go on and the
        backend always has every live rollout's next request (no turn barrier)."""
        task = self.task
        system = {"native": task.native_system, "json": task.json_system}.get(self.protocol, task.tags_system)(
            self.contract
        )
        rollouts = [
            Rollout(
                question,
                seed,
                [
                    ChatMessage(role="system", content=system),
                    ChatMessage(role="user", content=f"{task.prompt_prefix}{question}"),
                ],
                hint=hints[index] if hints else None,
            )
            for index, (question, seed) in enumerate(questions)
        ]
        progress = _TurnProgress(self.log, self.stage, self.max_turns, len(rollouts))
        await asyncio.gather(*(self._roll(rollout, progress) for rollout in rollouts))
        return rollouts

    async def _roll(self, rollout: Rollout, progress: "_TurnProgress") -> None:
        """One conversation to its end; every turn is its own cached request, seeded by rollout and turn."""
        for turn in range(self.max_turns):
            progress.reached(turn)
            if self.context == "summarize" and rollout.context_tokens > self.summarize_at:
                await self._summarize(rollout, turn)
            (result,) = await self.client.complete([self._request(rollout, turn)])
            self._advance(rollout, result)
            await self.run_pending(rollout)
            if rollout.done:
                break
        if not rollout.done:
            rollout.finish_reason = "turn_budget_exhausted"
        progress.finished()

    def _shown(self, rollout: Rollout) -> list[ChatMessage]:
        """The messages this turn's request shows, as the context policy shapes them (recorded)."""
        if self.context == "archive":
            shown, view = archived_view(rollout.messages, self.keep_results)
        elif self.context == "summarize" and rollout.summaries:
            shown, view = summarized_view(
                rollout.messages, PROMPT_MESSAGES, rollout.summaries[-1], rollout.summarized, len(rollout.summaries) - 1
            )
        elif self.context == "summarize":  # nothing summarized yet: every message shown
            shown, view = rollout.messages, ContextView()
        else:
            return rollout.messages
        rollout.views.append(view.record())
        return shown

    async def _summarize(self, rollout: Rollout, turn: int) -> None:
        """Replace the work before the latest `keep_results` results by the same model's summary of
        it (with the previous summary, if any), when there is new work to fold in."""
        cut = summary_cut(rollout.messages, self.keep_results)
        if cut <= max(rollout.summarized, PROMPT_MESSAGES):
            return
        request = ChatRequest(
            messages=summary_messages(rollout.messages, rollout.summaries, rollout.summarized, cut),
            sampling=SamplingParams(temperature=0.0, max_tokens=self.max_tokens, seed=rollout.seed * 1000 + 500 + turn),
            stage=f"{self.stage}_summary",
        )
        (result,) = await self.client.complete([request])
        if not isinstance(result, ChatResponse) or not (result.completions[0].text or "").strip():
            return  # no summary this turn: the context stays as it was, and the budget decides
        rollout.usage = Usage(
            prompt_tokens=rollout.usage.prompt_tokens + result.usage.prompt_tokens,
            completion_tokens=rollout.usage.completion_tokens + result.usage.completion_tokens,
        )
        rollout.summaries.append((result.completions[0].text or "").strip())
        rollout.summarized = cut

    def _request(self, rollout: Rollout, turn: int) -> ChatRequest:
        seed = rollout.seed * 1000 + turn
        schema = None
        messages = self._shown(rollout)
        if self.protocol == "native":
            sampling = SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, seed=seed)
            prompt = openai_messages(messages)
        elif self.protocol == "json":
            sampling = SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, seed=seed)
            prompt = _prompt(messages, tags=False)
            if self.demonstrate:
                prompt = prompt[:1] + self.task.json_demonstration(self.contract) + prompt[1:]
            if turn == self.max_turns - 1:  # the budget's last turn must deliver the result
                allowed = [self.task.final_tool]
            elif rollout.num_tool_calls < self.required_calls:
                allowed = self.tools.schemas
            else:
                allowed = self.schemas
            schema = call_schema(allowed)
        else:
            sampling = SamplingParams(
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=seed,
                stop=["</tool_call>", f"</{self.task.final_tag}>"],
            )
            prompt = _prompt(messages)
            if self.demonstrate:
                prompt = prompt[:1] + self.task.demonstration_turns(self.contract) + prompt[1:]
        if rollout.hint:
            prompt = [{**prompt[0], "content": f"{prompt[0]['content']}\n\n{rollout.hint}"}, *prompt[1:]]
        return ChatRequest(
            messages=prompt,
            sampling=sampling,
            stage=self.stage,
            json_schema=schema,
            tools=self.schemas if self.protocol == "native" else None,
        )

    def _advance(self, rollout: Rollout, result) -> None:
        if not isinstance(result, ChatResponse):
            rollout.finish_reason = result.reason
            return
        rollout.usage = Usage(
            prompt_tokens=rollout.usage.prompt_tokens + result.usage.prompt_tokens,
            completion_tokens=rollout.usage.completion_tokens + result.usage.completion_tokens,
        )
        rollout.context_tokens = result.usage.prompt_tokens + result.usage.completion_tokens
        rollout.reasoning_tokens += result.reasoning_tokens
        completion = result.completions[0]
        rollout.reasoning_turns += bool(completion.reasoning)
        if self.protocol == "native":
            self._advance_native(rollout, completion)
        elif self.protocol == "json":
            self._advance_json(rollout, completion)
        else:
            self._advance_tags(rollout, completion)
        if not rollout.done and self.max_context_tokens and rollout.context_tokens > self.max_context_tokens:
            rollout.finish_reason = "token_budget_exhausted"

    def _advance_tags(self, rollout: Rollout, completion: Completion) -> None:
        tag = self.task.final_tag
        text = _first_action(close_stopped_tag(completion.text or "", ("tool_call", tag)), ("tool_call", tag))
        answer = extract_tagged(text, tag)
        if answer is not None:
            self._assistant(rollout, completion, text)
            rollout.answer, rollout.finish_reason = answer, "answered"
            return
        remaining, calls = parse_tool_calls(text, id_prefix=None)
        calls = calls or completion.tool_calls  # a backend that read the block as a call already
        if not calls:
            self._malformed(rollout, completion, text, self.task.correction)
            return
        self._run_calls(rollout, completion, remaining or None, calls[:1])  # one call per turn, as the prompt says

    def _advance_native(self, rollout: Rollout, completion: Completion) -> None:
        text = completion.text
        if completion.tool_calls:  # the contract's most calls a turn, as the RL trainer runs them
            calls = completion.tool_calls[: self.contract.max_parallel_calls]
            self._run_calls(rollout, completion, text or None, calls)
            return
        tag = self.task.final_tag
        answer = extract_tagged(close_stopped_tag(text or "", ("tool_call", tag)), tag)
        if answer is not None:
            self._assistant(rollout, completion, text)
            rollout.answer, rollout.finish_reason = answer, "answered"
            return
        self._malformed(rollout, completion, text or "", self.task.native_correction(self.contract))

    def _advance_json(self, rollout: Rollout, completion: Completion) -> None:
        text = completion.text or ""
        try:
            payload = json.loads(text)
            name, arguments = payload["name"], payload.get("arguments", {})
            call = ToolCall(
                id="", function=FunctionCall(name=name, arguments=json.dumps(arguments, ensure_ascii=False))
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            self._malformed(
                rollout, completion, text, self.task.native_correction(self.contract)
            )  # cut off, or no JSON decoding
            return
        self._run_calls(rollout, completion, None, [call])

    def _assistant(
        self, rollout: Rollout, completion: Completion, content: str | None, calls: list[ToolCall] | None = None
    ) -> None:
        """Store one assistant turn with the reasoning that came with it."""
        rollout.messages.append(
            ChatMessage(role="assistant", content=content, tool_calls=calls, reasoning_content=completion.reasoning)
        )

    def _malformed(self, rollout: Rollout, completion: Completion, text: str, correction: str) -> None:
        """No usable call and no answer: a reply cut off by the token limit (while answering, or while
        still thinking) ends the rollout (trainers drop truncated runs); anything else gets a
        corrective observation."""
        self._assistant(rollout, completion, text or "(empty reply)")
        if completion.finish_reason in ("length", TRUNCATED_REASONING):
            rollout.finish_reason = "truncated" if completion.finish_reason == "length" else TRUNCATED_REASONING
            return
        rollout.malformed += 1
        rollout.messages.append(ChatMessage(role="user", content=correction))

    def _run_calls(self, rollout: Rollout, completion: Completion, content: str | None, calls: list[ToolCall]) -> None:
        """Answer every call of one assistant turn, in order; the task's final call ends the rollout.
        Under a contract that finishes with a tag, an answer delivered as a call (json protocol) is
        stored as the contract says: `<answer>X</answer>` in text, with no tool turn."""
        final, argument = self.task.final_tool["function"]["name"], self.task.final_argument
        if self.task.answering and self.contract.finish == "tag" and [call.function.name for call in calls] == [final]:
            answer = _string_argument(calls[0], argument)
            if answer is not None:
                text = self.contract.answer_text(answer)
                self._assistant(rollout, completion, f"{content}\n{text}" if content else text)
                rollout.answer, rollout.finish_reason = answer, "answered"
                return
        calls = unique_call_ids(rollout.messages, calls)
        self._assistant(rollout, completion, content, calls)
        for call in calls:
            if call.function.name == final:
                answer = _string_argument(call, argument)
                if answer is None:
                    rollout.malformed += 1
                    observation = f"error: {final} needs a non-empty string `{argument}`"
                else:
                    rollout.answer, rollout.finish_reason = answer, "answered"
                    observation = ANSWER_RECORDED if argument == "answer" else f"{argument.capitalize()} recorded."
            else:
                error = self.tools.malformed(call)
                rollout.malformed += error is not None
                if error is None:  # run by run_pending, off the event loop, batched with other rollouts' searches
                    rollout.pending.append((len(rollout.messages), call))
                observation = error or ""
            rollout.messages.append(
                ChatMessage(role="tool", tool_call_id=call.id, name=call.function.name, content=observation)
            )
            rollout.num_tool_calls += call.function.name != final  # delivering the result is not a use of the world

    async def run_pending(self, rollout: Rollout) -> None:
        """Run the latest turn's tool calls, in order, and write their results into the tool messages."""
        pending, rollout.pending = rollout.pending, []
        for index, call in pending:
            result = await self.tools.execute_async(call)
            rollout.messages[index] = rollout.messages[index].model_copy(update={"content": result.text})
            rollout.queries += result.queries
            rollout.retrieved += [document.id for document in result.documents]


class _TurnProgress:
    """A line when the first rollout reaches each turn: how many are still running."""

    def __init__(self, log, stage: str, max_turns: int, total: int):
        self.log, self.stage, self.max_turns, self.total = log, stage, max_turns, total
        self.running, self.deepest = total, -1

    def reached(self, turn: int) -> None:
        if turn > self.deepest:
            self.deepest = turn
            if self.log is not None:
                self.log(
                    f"{self.stage}: turn {turn + 1}/{self.max_turns}, {self.running} of {self.total} rollouts still "
                    "running"
                )

    def finished(self) -> None:
        self.running -= 1


def call_schema(tools: list[dict], max_string: int = 200) -> dict:
    """JSON schema of one call to any of `tools` ({"name": const, "arguments": its parameters});
    strings are capped so a rambling argument cannot eat the turn's token budget."""

    def capped(schema: dict) -> dict:
        properties = {
            name: {**spec, "maxLength": spec.get("maxLength", max_string)} if spec.get("type") == "string" else spec
            for name, spec in schema.get("properties", {}).items()
        }
        return {**schema, "properties": properties, "additionalProperties": False}

    return {
        "anyOf": [
            {
                "type": "object",
                "additionalProperties": False,
                "required": ["name", "arguments"],
                "properties": {
                    "name": {"const": tool["function"]["name"]},
                    "arguments": capped(tool["function"]["parameters"]),
                },
            }
            for tool in tools
        ]
    }


def unique_call_ids(messages: list[ChatMessage], calls: list[ToolCall]) -> list[ToolCall]:
    """`calls` with ids unique within the rollout: a server's id is kept unless it is missing or
    already used (servers without a tool parser, and some with one, number calls from 0 each
    turn), which becomes `call_{turn}_{index}`."""
    used = {call.id for message in messages for call in message.tool_calls or []}
    unique = []
    for index, call in enumerate(calls):
        if not call.id or call.id in used:
            new_id, suffix = f"call_{len(messages)}_{index}", 0
            while new_id in used:
                suffix += 1
                new_id = f"call_{len(messages)}_{index}_{suffix}"
            call = call.model_copy(update={"id": new_id})
        used.add(call.id)
        unique.append(call)
    return unique


def _first_action(text: str, tags: tuple[str, ...]) -> str:
    """The reply up to its first closing action tag: what a stop string would have left (a model
    asked without stops, because it reasons, may go on to imagine the tool's answer)."""
    ends = [text.find(f"</{tag}>") + len(tag) + 3 for tag in tags if f"</{tag}>" in text]
    return text[: min(ends)] if ends else text


def _string_argument(call: ToolCall, name: str) -> str | None:
    try:
        arguments = json.loads(call.function.arguments or "{}")
    except json.JSONDecodeError:
        return None
    value = arguments.get(name) if isinstance(arguments, dict) else None
    return " ".join(value.split()) or None if isinstance(value, str) else None


def close_stopped_tag(text: str, tags: tuple[str, ...] = ("tool_call", "answer")) -> str:
    """Stop strings are cut from the reply: put back the closing tag a stop left open."""
    for tag in tags:
        if text.rfind(f"<{tag}>") > text.rfind(f"</{tag}>"):
            return text + f"</{tag}>"
    return text

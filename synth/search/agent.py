"""The search agent loop: a model answers a question by calling `search`/`open` until it answers.

Tool calls are written as text (`<tool_call>{...}</tool_call>`, the Hermes/Qwen convention every
chat model can follow) and the final answer as `<answer>...</answer>`, as in Search-R1. All
unfinished conversations of a batch go to the model together, one turn at a time, so vLLM batches
them. Every turn is an ordinary cached request whose seed derives from the rollout, so a rerun
after a crash replays finished turns from the cache and spends tokens only where it stopped.

A reply with neither a parseable tool call nor an answer gets a corrective observation (counted
as malformed), as RL trainers do; a rollout ends at its answer, at `max_turns`, or on a failure.
The stored messages are OpenAI-shaped (assistant `tool_calls`, `tool` results).
"""

import re
from dataclasses import dataclass, field

from synth.llm.client import LLMClient
from synth.llm.toolcalls import parse_tool_calls
from synth.llm.types import ChatRequest, ChatResponse, SamplingParams
from synth.schemas import ChatMessage, Usage
from synth.search.tools import SearchTools

_ANSWER = re.compile(r"<answer>(.*?)</answer>", re.DOTALL | re.IGNORECASE)

SYSTEM = (
    "You answer questions by searching a collection of documents.\n"
    'To search, write: <tool_call>{"name": "search", "arguments": {"query": "your query"}}</tool_call>\n'
    'To read a document in full, write: <tool_call>{"name": "open", "arguments": {"doc_id": "an id from the results"}}</tool_call>\n'
    "Search results come back inside <tool_response> tags. Search as often as you need, one call per reply.\n"
    "When you know the answer, reply with <answer>the answer</answer>: only the name, no explanation."
)
CORRECTION = "error: reply with exactly one <tool_call>{...}</tool_call> or with <answer>...</answer>."
# A worked rollout (invented entities) shown before the question when `demonstrate` is on: small
# models copy the call format from it. It is part of the request only, never of the stored trajectory.
DEMONSTRATION = [
    {"role": "user", "content": "Question: In which country was the director of the film Grey Harbour born?"},
    {"role": "assistant", "content": '<tool_call>{"name": "search", "arguments": {"query": "Grey Harbour film director"}}</tool_call>'},
    {"role": "user", "content": "<tool_response>\nDoc 1(Title: Grey Harbour) [id: demo#0] Grey Harbour was directed by Mira Olsen.\n</tool_response>"},
    {"role": "assistant", "content": '<tool_call>{"name": "search", "arguments": {"query": "Mira Olsen born"}}</tool_call>'},
    {"role": "user", "content": "<tool_response>\nDoc 1(Title: Mira Olsen) [id: demo#1] Mira Olsen was born in Norway.\n</tool_response>"},
    {"role": "assistant", "content": "<answer>Norway</answer>"},
]


def extract_answer(text: str | None) -> str | None:
    """The content of the last <answer> tag, or None."""
    found = _ANSWER.findall(text or "")
    if not found:
        return None
    return " ".join(found[-1].split()) or None


@dataclass
class Rollout:
    """One agent run on one question."""

    question: str
    seed: int
    messages: list[ChatMessage] = field(default_factory=list)
    answer: str | None = None
    num_tool_calls: int = 0
    malformed: int = 0
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    """answered, turn_budget_exhausted, or the model call's failure reason."""

    @property
    def done(self) -> bool:
        return self.finish_reason is not None


def _prompt(messages: list[ChatMessage]) -> list[dict]:
    """The stored conversation as a plain chat the model reads: tool calls back as tags, tool
    results as user turns in <tool_response> tags (chat templates of small models know no tool role)."""
    prompt = []
    for message in messages:
        if message.role == "tool":
            prompt.append({"role": "user", "content": f"<tool_response>\n{message.content}\n</tool_response>"})
        elif message.role == "assistant" and message.tool_calls:
            calls = "".join(
                f'<tool_call>{{"name": "{call.function.name}", "arguments": {call.function.arguments}}}</tool_call>'
                for call in message.tool_calls
            )
            prompt.append({"role": "assistant", "content": f"{message.content or ''}{calls}".strip()})
        else:
            prompt.append({"role": message.role, "content": message.content})
    return prompt


class SearchAgent:
    def __init__(self, client: LLMClient, tools: SearchTools, max_turns: int = 4, max_tokens: int = 96,
                 temperature: float = 0.7, stage: str = "agent", demonstrate: bool = False):
        self.client = client
        self.demonstrate = demonstrate
        self.tools = tools
        self.max_turns = max_turns
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.stage = stage

    async def run(self, questions: list[tuple[str, int]]) -> list[Rollout]:
        """One rollout per (question, seed), all advanced turn by turn in shared batches."""
        rollouts = [
            Rollout(question, seed, [ChatMessage(role="system", content=SYSTEM), ChatMessage(role="user", content=f"Question: {question}")])
            for question, seed in questions
        ]
        for turn in range(self.max_turns):
            active = [rollout for rollout in rollouts if not rollout.done]
            if not active:
                break
            requests = [self._request(rollout, turn) for rollout in active]
            for rollout, result in zip(active, await self.client.complete(requests)):
                self._advance(rollout, result)
        for rollout in rollouts:
            if not rollout.done:
                rollout.finish_reason = "turn_budget_exhausted"
        return rollouts

    def _request(self, rollout: Rollout, turn: int) -> ChatRequest:
        sampling = SamplingParams(temperature=self.temperature, max_tokens=self.max_tokens, seed=rollout.seed * 1000 + turn,
                                  stop=["</tool_call>", "</answer>"])
        prompt = _prompt(rollout.messages)
        if self.demonstrate:
            prompt = prompt[:1] + DEMONSTRATION + prompt[1:]
        return ChatRequest(messages=prompt, sampling=sampling, stage=self.stage)

    def _advance(self, rollout: Rollout, result) -> None:
        if not isinstance(result, ChatResponse):
            rollout.finish_reason = result.reason
            return
        rollout.usage = Usage(prompt_tokens=rollout.usage.prompt_tokens + result.usage.prompt_tokens,
                              completion_tokens=rollout.usage.completion_tokens + result.usage.completion_tokens)
        text = close_stopped_tag(result.text or "")
        answer = extract_answer(text)
        if answer is not None:
            rollout.messages.append(ChatMessage(role="assistant", content=text))
            rollout.answer, rollout.finish_reason = answer, "answered"
            return
        remaining, calls = parse_tool_calls(text, id_prefix=f"call_{len(rollout.messages)}")
        if not calls:
            rollout.malformed += 1
            rollout.messages.append(ChatMessage(role="assistant", content=text or "(empty reply)"))
            rollout.messages.append(ChatMessage(role="user", content=CORRECTION))
            return
        call = calls[0]  # one call per turn, as the system prompt says
        rollout.messages.append(ChatMessage(role="assistant", content=remaining or None, tool_calls=[call]))
        rollout.messages.append(ChatMessage(role="tool", tool_call_id=call.id, name=call.function.name, content=self.tools.call(call)))
        rollout.num_tool_calls += 1


def close_stopped_tag(text: str) -> str:
    """Stop strings are cut from the reply: put back the closing tag a stop left open."""
    for tag in ("tool_call", "answer"):
        if text.rfind(f"<{tag}>") > text.rfind(f"</{tag}>"):
            return text + f"</{tag}>"
    return text

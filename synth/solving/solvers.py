"""Panel members: a model that answers closed-book, from gold evidence, or as a search agent; and
a model-free retrieval reader, declared as a baseline.

Each solver returns `Outcome`s (k per item and condition). Requests carry seeds derived from the
item id, so reruns hit the response cache and a killed run resumes without paying twice.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from synth.contract.matching import mentions
from synth.hashing import item_seed
from synth.llm.client import LLMClient
from synth.llm.responses import TRUNCATED_REASONING
from synth.llm.types import ChatRequest, ChatResponse, Completion, SamplingParams
from synth.schemas import ChatMessage, Document, Item, Usage
from synth.schemas.solving import Condition
from synth.search.agent import SearchAgent, close_stopped_tag, extract_answer
from synth.search.budget import PANEL_AGENT, AgentBudget
from synth.search.tools import SearchTools, render_documents

ANSWER_SYSTEM = (
    "Answer the question. Reply with only the answer (a name), inside <answer></answer>, with no explanation."
)
# Two worked exchanges shown before the question when `demonstrate` is on: small models copy the
# reply format from them. The embedded SmolLM2 read 17/50 answers back from gold
# evidence with them and 1/50 without (it wrote sentences instead of names).
DEMONSTRATIONS: dict[str, list[tuple[str, str]]] = {
    "closed_book": [
        ("Question: Which city is the capital of France?", "Paris"),
        ("Question: Which country contains the city where Ada Lovelace was born?", "England"),
    ],
    "gold_evidence": [
        (
            "Documents:\nDoc 1(Title: Paris) [id: demo#0] Paris is the capital of France.\n\n"
            "Question: Which city is the capital of France?",
            "Paris",
        ),
        (
            "Documents:\nDoc 1(Title: Ada Lovelace) [id: demo#1] Ada Lovelace was born in London.\n"
            "Doc 2(Title: London) [id: demo#2] London is located in England.\n\n"
            "Question: Which country contains the city where Ada Lovelace was born?",
            "England",
        ),
    ],
}


@dataclass
class Outcome:
    """One sample of one solver on one item under one condition."""

    answer: str | None
    num_tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    failure: str | None = None
    messages: list[ChatMessage] | None = None
    """The agent's conversation, for conditions that use tools."""
    malformed_turns: int = 0
    """Agent replies with neither a tool call nor an answer (each got a corrective observation)."""
    reasoning_tokens: int = 0
    """Completion tokens the model spent reasoning (its share, for one of k samples)."""
    context: dict | None = None
    """What each turn saw, where a context policy shaped it (`Rollout.context_record`)."""


class Solver(Protocol):
    name: str
    model: str
    conditions: tuple[Condition, ...]

    async def solve(self, items: list[Item], condition: Condition, k: int) -> list[list[Outcome]]: ...


def parse_answer(text: str | None) -> str | None:
    """The tagged answer, or the first line of an untagged reply (small models forget tags)."""
    tagged = extract_answer(close_stopped_tag(text or ""))
    if tagged is not None:
        return tagged
    first = next((line.strip() for line in (text or "").splitlines() if line.strip()), "")
    return first.removeprefix("Answer:").strip().rstrip(".") or None


class ModelSolver:
    def __init__(
        self,
        name: str,
        client: LLMClient,
        tools: SearchTools,
        evidence: Callable[[Item], list[Document]],
        conditions: tuple[Condition, ...],
        budget: AgentBudget = AgentBudget(),
        answer_tokens: int = 24,
        stage: str = "solver",
    ):
        """`budget`: the search agent's turns and tokens, and the sampling of every condition (unset
        keys: the panel's defaults for the client's model); `stage`: prefix of the request stages
        (`solver_closed_book`, ...), so the ledger tells this solver's calls from those of other
        readers of the same model."""
        budget = PANEL_AGENT.resolve(budget, client)
        self.name = name
        self.stage = stage
        self.client = client
        self.demonstrate = budget.demonstrations
        self.evidence = evidence
        self.conditions = conditions
        self.answer_tokens = answer_tokens
        self.temperature: float = budget.temperature if budget.temperature is not None else 0.0  # set by defaults
        self.agent = SearchAgent(client, tools, budget, stage="solver_search")

    @property
    def model(self) -> str:
        return self.client.model_id

    async def solve(self, items: list[Item], condition: Condition, k: int) -> list[list[Outcome]]:
        if condition == "search":
            rollouts = await self.agent.run(
                [
                    (item.question, item_seed(item, f"{self.name}:search:{index}"))
                    for item in items
                    for index in range(k)
                ]
            )
            return [
                [
                    Outcome(
                        rollout.answer,
                        rollout.num_tool_calls,
                        rollout.usage,
                        None if rollout.finish_reason == "answered" else rollout.finish_reason,
                        rollout.messages,
                        rollout.malformed,
                        rollout.reasoning_tokens,
                        rollout.context_record(self.agent.context),
                    )
                    for rollout in rollouts[start : start + k]
                ]
                for start in range(0, len(rollouts), k)
            ]
        requests = [self._request(item, condition, k) for item in items]
        outcomes = []
        for result in await self.client.complete(requests):
            if not isinstance(result, ChatResponse):
                outcomes.append([Outcome(None, failure=result.reason) for _ in range(k)])
                continue
            share = Usage(
                prompt_tokens=result.usage.prompt_tokens // k, completion_tokens=result.usage.completion_tokens // k
            )
            outcomes.append(
                [_short_answer(completion, share, result.reasoning_tokens // k) for completion in result.completions][
                    :k
                ]
            )
        return outcomes

    def _request(self, item: Item, condition: Condition, k: int) -> ChatRequest:
        if condition == "gold_evidence":
            prompt = f"Documents:\n{render_documents(self.evidence(item))}\n\nQuestion: {item.question}"
        else:
            prompt = f"Question: {item.question}"
        sampling = SamplingParams(
            temperature=self.temperature,
            max_tokens=self.answer_tokens,
            n=k,
            seed=item_seed(item, f"{self.name}:{condition}"),
            stop=["</answer>", "\n"],
        )
        messages: list[dict] = [{"role": "system", "content": ANSWER_SYSTEM}]
        for question, answer in DEMONSTRATIONS[condition] if self.demonstrate else ():
            messages += [
                {"role": "user", "content": question},
                {"role": "assistant", "content": f"<answer>{answer}</answer>"},
            ]
        return ChatRequest(
            messages=messages + [{"role": "user", "content": prompt}],
            sampling=sampling,
            stage=f"{self.stage}_{condition}",
        )


def _short_answer(completion: Completion, usage: Usage, reasoning_tokens: int) -> Outcome:
    """A closed-book or gold-evidence sample: the answer from its final content; a model cut off
    while still reasoning gave none, and says so."""
    answer = parse_answer(completion.text)
    failure = TRUNCATED_REASONING if answer is None and completion.finish_reason == TRUNCATED_REASONING else None
    return Outcome(answer, usage=usage, failure=failure, reasoning_tokens=reasoning_tokens)


class RetrievalReader:
    """Model-free baseline: one search with the question; the answer is the title of the best
    document whose title the question does not mention. Deterministic, so k samples agree."""

    model = "baseline:bm25-reader"
    conditions: tuple[Condition, ...] = ("search",)

    def __init__(self, name: str, tools: SearchTools, depth: int = 10):
        self.name = name
        self.tools = tools
        self.depth = depth

    async def solve(self, items: list[Item], condition: Condition, k: int) -> list[list[Outcome]]:
        if condition != "search":
            raise ValueError(f"{self.name} is a retrieval baseline and only runs the search condition")
        outcomes = []
        found = (
            self.tools.search_many([item.question for item in items], self.depth) if items else []
        )  # one batched retriever call
        for item, documents in zip(items, found):
            answer = next(
                (document.title for document in documents if not mentions(item.question, document.title)), None
            )
            outcomes.append(
                [Outcome(answer, num_tool_calls=1, failure=None if answer else "nothing_retrieved") for _ in range(k)]
            )
        return outcomes

"""Scripted agent rollouts of varied length under every protocol, as JSON: the fixture
`tests/fixtures/agent_rollouts.json` was written by this module before the agent loop changed,
and the test compares today's rollouts with it (same seeds, same trajectories).

    python tests/search/agent_recording.py > tests/fixtures/agent_rollouts.json
"""

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from synth.llm.client import LLMClient
from synth.llm.fake import ScriptedBackend
from synth.llm.types import ChatRequest, Completion
from synth.schemas import Document, FunctionCall, ToolCall
from synth.search.agent import SearchAgent
from synth.search.budget import AgentBudget
from synth.search.corpus import Corpus
from synth.search.retrieval import BM25Retriever
from synth.search.tools import SearchTools

DOCUMENTS = [
    Document(
        id=f"d{index}",
        title=f"Topic {index}",
        text=f"Topic {index} is about subject {index % 4} and place {index % 3}.",
    )
    for index in range(12)
]
QUESTIONS = [(f"Which topic is about subject {index % 4}?", 100 + index) for index in range(8)]
MAX_TURNS = 12


def turns_planned(seed: int) -> int:
    """Searches before the answer: 0-3 for most rollouts, 10 for one (a long tail)."""
    return 10 if seed % 8 == 5 else seed % 4


def reply(protocol: str):
    def answer(request: ChatRequest):
        rollout, turn = divmod(request.sampling.seed, 1000)
        searching = turn < turns_planned(rollout)
        query = f"subject {rollout % 4} turn {turn}"
        if protocol == "tags":
            return (
                f'<tool_call>{{"name": "search", "arguments": {{"query": "{query}"}}}}'
                if searching
                else f"<answer>Topic {rollout % 12}</answer>"
            )
        if protocol == "json":
            call = (
                {"name": "search", "arguments": {"query": query}}
                if searching
                else {"name": "answer", "arguments": {"answer": f"Topic {rollout % 12}"}}
            )
            return json.dumps(call)
        if searching:
            return Completion(
                tool_calls=[
                    ToolCall(
                        id=f"c{turn}", function=FunctionCall(name="search", arguments=json.dumps({"query": query}))
                    )
                ],
                finish_reason="tool_calls",
            )
        return Completion(text=f"<answer>Topic {rollout % 12}</answer>", finish_reason="stop")

    return answer


def record(folder: Path, log=None) -> dict[str, list[dict]]:
    corpus = Corpus(DOCUMENTS, name="recording")
    tools = SearchTools(corpus, BM25Retriever(corpus, folder / "index", log=lambda line: None), default_k=2)
    recorded = {}
    for protocol in ("tags", "json", "native"):
        backend = ScriptedBackend(default=reply(protocol), native_tools=protocol == "native")
        agent = SearchAgent(
            LLMClient(backend),
            tools,
            AgentBudget(max_turns=MAX_TURNS, turn_tokens=96, temperature=0.7, demonstrations=False, protocol=protocol),
            stage=f"record_{protocol}",
            log=log,
        )
        rollouts = asyncio.run(agent.run(QUESTIONS))
        recorded[protocol] = [
            {
                "messages": [message.model_dump(mode="json") for message in rollout.messages],
                "answer": rollout.answer,
                "finish_reason": rollout.finish_reason,
                "num_tool_calls": rollout.num_tool_calls,
                "queries": rollout.queries,
                "retrieved": rollout.retrieved,
                "malformed": rollout.malformed,
            }
            for rollout in rollouts
        ]
    return recorded


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        json.dump(record(Path(scratch)), sys.stdout, indent=1, sort_keys=True)
        print()

"""Rollouts run independently: the same seeds give the same trajectories as the lock-step loop
did (a recorded fixture), and a short rollout finishes while a long one is still running."""

import asyncio
import json
from pathlib import Path

import agent_recording
from agent_recording import record

from synth.llm.client import LLMClient
from synth.llm.fake import ScriptedBackend
from synth.search.budget import AgentBudget

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "agent_rollouts.json"


def test_the_same_seeds_give_the_same_trajectories_as_before(tmp_path):
    assert record(tmp_path) == json.loads(FIXTURE.read_text())


class TimedBackend(ScriptedBackend):
    """Answers after a delay chosen per rollout, and records (rollout seed, turn) as answers complete."""

    def __init__(self, reply, delays: dict[int, float]):
        super().__init__(default=reply)
        self.delays, self.completed = delays, []

    async def complete(self, requests):
        rollout, turn = divmod(requests[0].sampling.seed, 1000)
        await asyncio.sleep(self.delays[rollout])
        self.completed.append((rollout, turn))
        return await super().complete(requests)


def test_rollouts_of_different_lengths_finish_independently(tmp_path):
    from synth.search.agent import SearchAgent
    from synth.search.corpus import Corpus
    from synth.search.retrieval import BM25Retriever
    from synth.search.tools import SearchTools

    corpus = Corpus(agent_recording.DOCUMENTS, name="independent")
    tools = SearchTools(corpus, BM25Retriever(corpus, tmp_path / "index", log=lambda line: None), default_k=2)
    short, long = 104, 101  # answers on its first turn; searches 10 times first
    backend = TimedBackend(agent_recording.reply("tags"), {short: 0.2, long: 0.005})
    agent = SearchAgent(LLMClient(backend), tools, AgentBudget(max_turns=12, demonstrations=False, protocol="tags"))
    rollouts = asyncio.run(agent.run([("short one?", short), ("long one?", long)]))
    assert [rollout.num_tool_calls for rollout in rollouts] == [0, 10]
    # the ten-turn rollout did not wait at each turn for the slow one-turn rollout: it was done first
    # (in lock-step its second turn waits for the first turn of every rollout)
    assert backend.completed.index((long, 10)) < backend.completed.index((short, 0))


def test_a_turn_runs_at_most_the_contracts_parallel_calls_as_verl_would(tmp_path):
    """A turn with six parallel searches keeps the contract's first four (verl's tool loop runs only
    `multi_turn.max_parallel_calls` of a turn, and the verl command sets it to the contract's value):
    the stored turn holds the calls that ran, each answered, so SFT teaches what RL will run."""
    from synth.contract.contracts import SYNTH
    from synth.llm.types import Completion
    from synth.schemas import FunctionCall, ToolCall
    from synth.search.agent import SearchAgent
    from synth.search.corpus import Corpus
    from synth.search.retrieval import BM25Retriever
    from synth.search.tools import SearchTools

    def reply(request):
        if any(message.get("role") == "tool" for message in request.messages):
            return Completion(text="<answer>Topic 1</answer>", finish_reason="stop")
        calls = [
            ToolCall(id=f"c{n}", function=FunctionCall(name="search", arguments=json.dumps({"query": f"subject {n}"})))
            for n in range(6)
        ]
        return Completion(tool_calls=calls, finish_reason="tool_calls")

    corpus = Corpus(agent_recording.DOCUMENTS, name="parallel")
    tools = SearchTools(corpus, BM25Retriever(corpus, tmp_path / "index", log=lambda line: None), default_k=2)
    budget = AgentBudget(max_turns=4, demonstrations=False, protocol="native")
    (rollout,) = asyncio.run(SearchAgent(LLMClient(ScriptedBackend(default=reply)), tools, budget).run([("q?", 1)]))
    calling = [message for message in rollout.messages if message.tool_calls]
    assert SYNTH.max_parallel_calls == 4 and len(calling) == 1
    assert [call.id for call in calling[0].tool_calls] == ["c0", "c1", "c2", "c3"]
    answered = [message.tool_call_id for message in rollout.messages if message.role == "tool"]
    assert answered == ["c0", "c1", "c2", "c3"] and rollout.answer == "Topic 1"

"""Trajectories worth training on, over HTTP: a loopback server plays four teachers that all answer
right in the end (one guesses without seeing the answer, one repeats a search, one names an entity
no result showed, one solves properly); only the proper one is kept, each other is rejected with its
reason, and the kept one's step labels follow the rules (synth.solving.trajectory_reading)."""

import asyncio

import pytest
from habits_server import HabitsServer

from synth.generators.distill import DistillConfig, Teacher
from synth.kg.name_mentions import WorldNames
from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.openai_http import OpenAICompatibleBackend
from synth.llm.reasoning import ReasoningPolicy
from synth.schemas import Document
from synth.search.budget import AgentBudget
from synth.search.corpus import Corpus
from synth.search.retrieval import BM25Retriever
from synth.search.tools import SearchTools
from synth.solving.rejection import distill_statistics, judge_rollouts

CHAINS = [  # (director, birthplace, film)
    ("Alice Ames", "Springfield", "First Light"),
    ("Bob Burns", "Shelbyville", "Dark Water"),
    ("Cora Cole", "Ogdenville", "Blue Harbor"),
    ("Dan Dade", "Capital City", "Last Train"),
]
HABITS = {  # what each teacher searches, in order, before it answers the film
    "guesses": ["Springfield weather"],
    "repeats": ["born in Shelbyville, directed", "born in Shelbyville, directed"],
    "leaps": ["Cora Cole films"],
    "solves": ["born in Capital City, directed", "Last Train"],
}
EXPECTED = {
    "guesses": "answer_not_grounded",
    "repeats": "repeated_call",
    "leaps": "unseen_entity",
    "solves": None,
}


def documents() -> list[Document]:
    found = []
    for index, (person, town, film) in enumerate(CHAINS):
        found += [
            Document(id=f"p{index}", title=person, text=f"{person} was born in {town}. {person} directed {film}."),
            Document(id=f"f{index}", title=film, text=f"{film} is a drama film directed by {person}."),
            Document(id=f"w{index}", title=f"{town} weather", text="Mild winters, warm summers."),
        ]
    return found


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    corpus = Corpus(documents(), name="habits")
    index = tmp_path_factory.mktemp("index")
    return SearchTools(corpus, BM25Retriever(corpus, index, log=lambda line: None), default_k=1)


@pytest.mark.parametrize("protocol", ["native", "tags"])
def test_only_the_teacher_that_solves_properly_is_kept(protocol, make_item, tools, tmp_path):
    server = HabitsServer("vllm").start_in_thread()
    items = []
    for index, ((habit, searches), (_, town, film)) in enumerate(zip(HABITS.items(), CHAINS, strict=True)):
        question = f"Which film was directed by someone born in {town}?"
        items.append(make_item(index, question=question, answer=film, aliases=[], path=[], metadata={"habit": habit}))
        server.plan(question, searches, film)
    client = LLMClient(
        OpenAICompatibleBackend("teacher", [server.url], reasoning=ReasoningPolicy()),
        cache=ResponseCache(tmp_path / "cache.sqlite"),
    )
    config = DistillConfig(enabled=True, n=1, agent=AgentBudget(protocol=protocol))
    teacher = Teacher(config, client, tools)

    async def go():
        try:
            return await teacher.rollouts(items)
        finally:
            await client.aclose()

    try:
        rollouts = asyncio.run(go())
    finally:
        server.stop()
    names = WorldNames(name for chain in CHAINS for name in chain)
    judged = {t.item_id: t for t in judge_rollouts(items, rollouts, config, names=names)}
    for item in items:
        trajectory = judged[item.id]
        habit = item.metadata["habit"]
        assert trajectory.correct, habit  # every one of them answered right
        assert trajectory.reject_reason == EXPECTED[habit], (habit, trajectory.findings)
        assert trajectory.selected == (EXPECTED[habit] is None)
    solved = judged[items[3].id]
    assert solved.findings == [] and solved.answer_seen_at == 1
    assert solved.step_labels == ["exploration", "verification"]  # then it checks the film it found
    assert judged[items[1].id].step_labels == ["exploration", "redundant"]
    assert judged[items[0].id].answer_seen_at is None
    statistics = distill_statistics(list(judged.values()), len(items), config)
    assert statistics["rejected"] == {"answer_not_grounded": 1, "repeated_call": 1, "unseen_entity": 1}
    assert statistics["dpo_pairs"] == 0  # each item has one rollout: no chosen one to pair the others with

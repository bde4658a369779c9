"""One eval: the model answers each task k times as a search agent, every attempt scored.

The agent is the one the panel and the teachers run (`synth.search.agent`), with the world's tools
under the contract the data was made with, so an agent trained on the exports is measured as it
was trained. Every turn is a cached, seeded request: an interrupted eval, rerun, replays what was
answered and sends only the rest; the same eval twice sends nothing. Calls are counted in a
ledger with the run's token and cost budget, and a model whose calls mostly failed stops the eval
unstored (the recipes' failure gate), since its attempts would read as wrong answers.
"""

from dataclasses import dataclass, field
from datetime import UTC, datetime

from synth.contract.portable import match_answer
from synth.errors import BudgetExhausted
from synth.evaluation.report import summarize
from synth.evaluation.tasks import EvalTask
from synth.hashing import content_hash
from synth.llm.accounting import Budget
from synth.llm.gate import FailurePolicy, check_stage
from synth.llm.session import LLMSession
from synth.schemas import EvalAttempt, EvalRun
from synth.search.agent import ANSWERING, SearchAgent
from synth.search.budget import EVAL_AGENT, AgentBudget
from synth.search.tools import SearchTools
from synth.solving.trajectory_reading import read_trajectory


@dataclass(frozen=True)
class EvalSetup:
    """What names an eval (its id hashes all of it but `budget` and `failures`)."""

    model: str
    source: str
    split: str
    k: int = 1
    agent: AgentBudget = field(default_factory=AgentBudget)
    f1_threshold: float = 0.8
    world: dict = field(default_factory=dict)
    """Retriever, top-k, contract, graph and corpus the tools were built from."""
    fractions: dict = field(default_factory=dict)
    budget: Budget = field(default_factory=Budget)
    failures: FailurePolicy = field(default_factory=FailurePolicy)

    def eval_id(self, model_id: str, tasks: list[EvalTask]) -> str:
        named = {
            "model": self.model,
            "model_id": model_id,
            "source": self.source,
            "split": self.split,
            "k": self.k,
            "agent": self.agent.model_dump(exclude_none=True),
            "f1": self.f1_threshold,
            "world": self.world,
            "fractions": self.fractions,
            "items": [task.item_id for task in tasks],
        }
        return f"eval-{content_hash(named, 12)}"


async def run_eval(
    session: LLMSession, tools: SearchTools, tasks: list[EvalTask], setup: EvalSetup, log=None
) -> tuple[EvalRun, list[EvalAttempt]]:
    client = session.client(setup.model)
    agent_budget = setup.agent
    if setup.k > 1 and agent_budget.temperature is None:
        agent_budget = agent_budget.model_copy(update={"temperature": 0.7})  # k greedy samples would be one
    agent = SearchAgent(client, tools, agent_budget, stage="eval", log=log, task=ANSWERING, defaults=EVAL_AGENT)
    eval_id = setup.eval_id(client.model_id, tasks)
    seeds = [
        (task.question, int(content_hash({"eval": task.item_id, "sample": sample}, 8), 16))
        for task in tasks
        for sample in range(setup.k)
    ]
    with session.ledger.stage() as calls:
        rollouts = await agent.run(seeds)
    if session.ledger.exhausted:
        raise BudgetExhausted(
            "the eval stopped at its budget (--max-tokens / --max-cost) and stored nothing; rerun with a larger "
            "budget: every answered call is reused from the cache"
        )
    check_stage("eval", calls.export(), session.ledger, setup.failures)
    attempts = []
    for position, rollout in enumerate(rollouts):
        task, sample = tasks[position // setup.k], position % setup.k
        matched, _ = match_answer(rollout.answer, task.answers, setup.f1_threshold)
        attempts.append(
            EvalAttempt(
                eval_id=eval_id,
                item_id=task.item_id,
                sample=sample,
                question=task.question,
                gold=task.answers[0],
                predicted=rollout.answer,
                correct=matched != "none",
                match=matched,
                hops=task.hops,
                difficulty=task.difficulty,
                relation_family=task.relation_family,
                style=task.style,
                tool_calls=rollout.num_tool_calls,
                answer_seen_at=read_trajectory(
                    rollout.messages,
                    [*task.answers, *([rollout.answer] if matched != "none" and rollout.answer else [])],
                ).answer_seen_at,
                turns=sum(message.role == "assistant" for message in rollout.messages),
                prompt_tokens=rollout.usage.prompt_tokens,
                completion_tokens=rollout.usage.completion_tokens,
                finish_reason=rollout.finish_reason or "unknown",
                messages=rollout.messages,
            )
        )
    summary = summarize(attempts, setup.k)
    run = EvalRun(
        id=eval_id,
        created_at=datetime.now(UTC),
        model=setup.model,
        model_id=client.model_id,
        source=setup.source,
        split=setup.split,
        k=setup.k,
        items=len(tasks),
        pass_at_1=summary["pass_at_1"],
        pass_at_k=summary["pass_at_k"],
        ci95_low=summary["ci95"][0],
        ci95_high=summary["ci95"][1],
        config={
            "agent": agent.budget.model_dump(exclude_none=True),
            "protocol": agent.protocol,
            "f1_threshold": setup.f1_threshold,
            "world": setup.world,
            "fractions": setup.fractions,
        },
        summary=summary,
    )
    return run, attempts

"""Trajectory distillation: a teacher model solves each item n times with the world's tools.

The cold-start SFT stage of search agents trains on real end-to-end tool-use runs of a stronger
model (ASearcher, WebSailor, MedResearcher-R1). The teacher runs the same agent loop as the
panel's search solvers (`synth.search.agent`), with its tool-call channel when the backend has
one (`protocol: native`: OpenAI tool schemas search/open/answer) and the text protocol otherwise
(`tags`); both store the same OpenAI-shaped Trajectory. Every turn is a cached, seeded request, so
a rerun replays finished rollouts without spending tokens. Which rollouts are kept is decided by
`synth.solving.rejection`.
"""

from collections.abc import Callable
from typing import Literal

from pydantic import Field, model_validator

from synth.generators.guidance import Guidance, remove_hint_dependence
from synth.hashing import content_hash, item_seed
from synth.llm.client import LLMClient
from synth.schemas import Item, Trajectory
from synth.search.agent import Rollout, SearchAgent
from synth.search.budget import TEACHER_AGENT, AgentBudget, nest_agent_keys
from synth.search.tools import SearchTools
from synth.search.world import RetrieverChoice
from synth.solving.rejection import RejectionConfig


class DistillConfig(RejectionConfig):
    """The teacher: its model, search and budget; which rollouts are kept (`RejectionConfig`)."""

    enabled: bool = Field(
        default=False, description="Distill teacher trajectories for the published items (SFT and DPO data)."
    )
    teacher: Literal["model", "path"] = Field(
        default="model",
        description="model: the declared teacher_model solves each item with the tools; path: no model, each item's "
        "recorded construction path is walked through the same tools (procedural demonstrations, kept only where "
        "the tools surface every hop's evidence; synth.generators.path_teacher).",
    )
    teacher_model: str = Field(default="embedded", description="Declared model for the teacher role (teacher=model).")
    retriever: RetrieverChoice | None = Field(
        default=None,
        description="The teacher searches with this retriever (bm25, dense, hybrid or a /retrieve URL); "
        "default: world.retriever.",
    )
    retrieval_k: int | None = Field(
        default=None,
        ge=1,
        le=20,
        description="Documents one of the teacher's searches returns; default: world.retrieval_k.",
    )
    n: int = Field(default=4, ge=1, le=64, description="Rollouts per item (best-of-n).")
    agent: AgentBudget = Field(
        default_factory=AgentBudget,
        description="The teacher's turns, tokens per turn, longest trajectory kept (context_tokens), sampling, "
        "demonstrations and protocol (json: the answer only after min_tool_calls calls, and on the last turn); "
        "unset keys: 12 turns of 1,024 tokens within 32,768 on served models, 6 of 256 within 4,096 on the "
        "embedded one.",
    )
    guided: bool = Field(
        default=False,
        description="Show the teacher the construction path as a hint; stored runs must not depend on it.",
    )

    @model_validator(mode="before")
    @classmethod
    def _agent_keys(cls, values):
        return nest_agent_keys(values, {"max_context_tokens": "context_tokens"})


class Teacher:
    """Rollouts of one teacher model over a batch of items."""

    def __init__(
        self,
        config: DistillConfig,
        client: LLMClient,
        tools: SearchTools,
        guidance: Callable[[Item], Guidance | None] | None = None,
        log=None,
    ):
        self.config, self.client = config, client
        self.guidance = guidance if config.guided else None
        budget = TEACHER_AGENT.resolve(config.agent, client)
        protocol = budget.resolved_protocol(client.native_tool_calls())
        self.agent = SearchAgent(
            client,
            tools,
            budget,
            stage="distill",
            log=log,
            required_calls=config.min_tool_calls if protocol == "json" else 0,
            defaults=TEACHER_AGENT,
        )

    @property
    def protocol(self) -> str:
        return self.agent.protocol

    async def rollouts(self, items: list[Item]) -> list[Trajectory]:
        """n trajectories per item, unjudged (`correct`, `selected` and `reject_reason` unset)."""
        n = self.config.n
        guides = [self.guidance(item) if self.guidance else None for item in items]
        questions = [(item.question, item_seed(item, f"distill:{index}")) for item in items for index in range(n)]
        hints = [guide.hint if guide else None for guide in guides for _ in range(n)]
        rollouts = await self.agent.run(questions, hints if any(hints) else None)
        trajectories = []
        for position, rollout in enumerate(rollouts):
            item, index = items[position // n], position % n
            trajectories.append(await self._trajectory(item, index, rollout, guides[position // n]))
        return trajectories

    async def _trajectory(self, item: Item, index: int, rollout: Rollout, guide: Guidance | None) -> Trajectory:
        messages, metadata = (
            rollout.messages,
            {
                "protocol": self.protocol,
                "malformed_calls": rollout.malformed,
                "context_tokens": rollout.context_tokens,
                "reasoning_tokens": rollout.reasoning_tokens,
                "reasoning_turns": rollout.reasoning_turns,
                **self.agent.tools.trajectory_metadata,
            },
        )
        context = rollout.context_record(self.agent.context)
        if context is not None:  # which context each turn saw (synth.search.context_policy)
            metadata["context"] = context
        if guide is not None:
            messages, rewrites, leaked = await remove_hint_dependence(messages, guide, self.client, rollout.seed)
            metadata.update(hint_rewrites=rewrites, hint_leak=leaked)
        return Trajectory(
            id=content_hash(
                {
                    "item": item.id,
                    "teacher": self.client.model_id,
                    "sample": index,
                    "protocol": self.protocol,
                    "guided": guide is not None,
                }
            ),
            item_id=item.id,
            role="teacher",
            model=self.client.model_id,
            messages=messages,
            tools=self.agent.recorded_schemas,
            sample_index=index,
            final_answer=rollout.answer,
            num_tool_calls=rollout.num_tool_calls,
            finish_reason=rollout.finish_reason,
            usage=rollout.usage,
            guided=guide is not None,
            metadata=metadata,
        )

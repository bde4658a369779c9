"""A recipe in one file, on the base class alone: sums of two numbers, each tried by one model.
`synth generate --recipe sums_recipe:SumsRecipe` runs it (this folder on the import path)."""

import random

from pydantic import Field

from synth.llm.types import ChatRequest, ChatResponse, SamplingParams
from synth.pipelines.base import Construction, PanelShard, Recipe, RecipeResult, Round
from synth.pipelines.recipe_config import RecipeConfig
from synth.schemas import FunnelStage, Item, Provenance, SolverAttempt


class SumsConfig(RecipeConfig):
    n: int = Field(default=6, ge=1, description="Questions to publish.")
    seed: int = Field(default=0, description="Same seed, same numbers.")
    solver_model: str = Field(default="fake", description="Declared model that answers.")


ATTEMPT = {"solver": "solver", "condition": "closed_book", "sample_index": 0}


class SumsRecipe(Recipe[SumsConfig]):
    name = "sums"
    description = "What is A plus B? Each question tried once by a model; its answer labels the item."
    Config = SumsConfig

    def construct(self, rounds: list[Round]) -> Construction:
        rng = random.Random(self.config.seed)
        pairs = [(rng.randint(1, 99), rng.randint(1, 99)) for _ in range(self.config.n)]
        items = [
            Item(
                id=f"sum-{self.config.seed}-{index}",
                question=f"What is {a} plus {b}?",
                answer=str(a + b),
                recipe="sums",
                hops=1,
                provenance=Provenance(generator="sums", seed=self.config.seed),
            )
            for index, (a, b) in enumerate(pairs)
        ]
        funnel = [FunnelStage(stage="made", input=len(items), kept=len(items))]
        return Construction(items=items, funnel=funnel)

    def runs_panel(self) -> bool:
        return True

    async def attempt(self, items: list[Item]) -> PanelShard:
        client = self.context.llm_session({"solver": self.config.solver_model}).client("solver")
        sampling = SamplingParams(max_tokens=8, temperature=0.0)
        requests = [
            ChatRequest(messages=[{"role": "user", "content": i.question}], sampling=sampling, stage="sums")
            for i in items
        ]
        answers = await client.complete(requests)
        texts = [a.completions[0].text.strip() if isinstance(a, ChatResponse) else None for a in answers]
        attempts = [
            SolverAttempt(
                **ATTEMPT, id=f"{i.id}-0", item_id=i.id, model=client.model_id, answer=t, correct=t == i.answer
            )
            for i, t in zip(items, texts)
        ]
        return PanelShard(attempts=attempts, trajectories=[], solvers={"solver": client.model_id})

    def label(self, construction: Construction, shards: list[PanelShard]) -> RecipeResult:
        attempts = [attempt for shard in shards for attempt in shard.attempts]
        solved = {attempt.item_id for attempt in attempts if attempt.correct}
        items = [
            i.model_copy(update={"difficulty": "easy" if i.id in solved else "unsolved"}) for i in construction.items
        ]
        return RecipeResult(
            tables={"items": items, "attempts": attempts},
            funnel=construction.funnel,
            models={"solver": shards[0].solvers["solver"]} if shards else {},
            statistics={"solved": len(solved)},
        )

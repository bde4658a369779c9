"""An optional model judge for answers that string matching rejects ("NYC" for "New York City").

Only attempts with an answer that matched neither exactly, by alias, nor by F1 are judged, in one
batched structured call; a yes turns the attempt correct with match "judge". The judge sees the
question, the accepted answers and the candidate, never the solver's reasoning.
"""

from pydantic import BaseModel

from synth.llm.client import LLMClient
from synth.llm.structured import Structured, complete_structured
from synth.llm.types import ChatRequest, SamplingParams
from synth.schemas import Item, SolverAttempt

SYSTEM = (
    "You check answers to quiz questions. Say whether the candidate answer names the same thing as one of the "
    "accepted answers (another name, spelling or abbreviation of it counts; a different thing does not). Reply with "
    'JSON: {"same": true|false}.'
)


class Judgement(BaseModel):
    same: bool


class AnswerJudge:
    def __init__(self, client: LLMClient):
        self.client = client

    @property
    def model(self) -> str:
        return self.client.model_id

    async def rejudge(self, items: dict[str, Item], attempts: list[SolverAttempt]) -> list[SolverAttempt]:
        """`attempts` with the judge's verdict applied to the unmatched ones that have an answer."""
        pending = [index for index, attempt in enumerate(attempts) if not attempt.correct and attempt.answer]
        requests = [self._request(items[attempts[index].item_id], attempts[index].answer or "") for index in pending]
        judged = list(attempts)
        for index, result in zip(pending, await complete_structured(self.client, requests, Judgement, max_retries=1)):
            if isinstance(result, Structured) and result.value.same:
                judged[index] = attempts[index].model_copy(update={"correct": True, "match": "judge"})
        return judged

    @staticmethod
    def _request(item: Item, answer: str) -> ChatRequest:
        prompt = f"Question: {item.question}\nAccepted answers: {'; '.join(item.answers)}\nCandidate answer: {answer}"
        return ChatRequest(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            sampling=SamplingParams(temperature=0.0, max_tokens=16),
            stage="answer_judge",
        )

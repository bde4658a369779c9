"""An optional model judge of rephrasings: does the rewrite ask exactly what the template asks?

The verbalizer's checks are textual (every anchor named, content kept, nothing added, nothing
leaked); they cannot see a rewrite that keeps every word and changes the meaning ("born in X" read
as "died in X", a dropped "both", a relation turned round). The judge sees the template, the
rewrite and the construction's facts one per line (the cue texts), and answers whether the rewrite
states every fact, adds none and still has the same answer. It never sees the answer itself, so
it cannot be swayed by it. One batched, JSON-constrained call at temperature 0 for every rewrite
that passed the textual checks; a "no", or a reply that is no verdict, keeps the template.
"""

from pydantic import BaseModel, Field

from synth.llm.client import LLMClient
from synth.llm.structured import Structured, complete_structured
from synth.llm.types import ChatRequest, SamplingParams
from synth.schemas import Item

STAGE = "rephrase_judge"
SYSTEM = (
    "You check rewritten quiz questions. The original question states the facts listed, and only them. "
    "Say whether the rewrite asks for the same thing: it states every listed fact with the same meaning "
    "(same relations, same direction, same names), adds no fact, and drops none. Wording may differ. "
    'Reply with JSON: {"equivalent": true|false, "problem": "what changed, or empty"}.'
)


class Equivalence(BaseModel):
    equivalent: bool
    problem: str = Field(default="", max_length=300)


class RephraseJudge:
    def __init__(self, client: LLMClient, max_tokens: int = 96):
        self.client = client
        self.max_tokens = max_tokens

    @property
    def model(self) -> str:
        return self.client.model_id

    def request(self, item: Item, rephrased: str) -> ChatRequest:
        facts = "\n".join(f"- {cue.text}" for cue in item.cues) or "- (none listed)"
        prompt = (
            f"Original question: {item.question}\nFacts it states, about the entity asked for:\n{facts}\n"
            f"Rewrite: {rephrased}"
        )
        return ChatRequest(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            sampling=SamplingParams(temperature=0.0, max_tokens=self.max_tokens),
            stage=STAGE,
        )

    async def verdicts(self, pairs: list[tuple[Item, str]]) -> list[Equivalence | str]:
        """Per (item, rephrasing): the judge's Equivalence, or the reason it gave none
        ("invalid_json", "timeout", ...)."""
        if not pairs:
            return []
        results = await complete_structured(
            self.client, [self.request(item, text) for item, text in pairs], Equivalence, max_retries=1
        )
        return [result.value if isinstance(result, Structured) else result.reason for result in results]

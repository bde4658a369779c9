"""A served model as a reader: the same sheet, the same rubric, blind first and then revealed.

Per item two requests, as a person reads: the question alone ("name every real-world entity that
satisfies it"), then the question with the model's own answers, the stored answer, the path and the
evidence (right, only, rating, other answers, note). The model never sees the stored answer before
it has named its own. Its verdicts are stored as a `model` audit, apart from people's, so a judge
can be calibrated against readers before anyone relies on it. Requests go through the response
cache: a judge run again, or resumed after a kill, pays for nothing twice.
"""

from typing import Literal

from pydantic import BaseModel, Field

from synth.audit.rubric import RUBRIC
from synth.audit.sheets import Reveal, SheetRow
from synth.errors import SynthError
from synth.llm.client import LLMClient
from synth.llm.structured import Structured, complete_structured
from synth.llm.types import ChatRequest, SamplingParams
from synth.schemas import AuditSample, Item

STAGE = "audit_judge"
SYSTEM = "You are a careful reader auditing quiz questions for a dataset. Follow this rubric.\n\n" + RUBRIC


class BlindAnswers(BaseModel):
    answers: list[str] = Field(default_factory=list, max_length=12)
    """Every real-world entity that satisfies the question, as far as the reader knows ([] or "unsure")."""


class Verdict(BaseModel):
    right: bool
    only: bool
    rating: Literal["good", "ok", "bad"]
    other_answers: list[str] = Field(default_factory=list, max_length=12)
    note: str = Field(default="", max_length=400)


class JudgeFailed(SynthError):
    """The judge gave no verdict on some items (its replies were not the asked JSON, or calls failed)."""


def blind_request(question: str, max_tokens: int) -> ChatRequest:
    prompt = (
        f"Question: {question}\n\nStep 1 only: name every real-world entity you believe satisfies this question "
        '(several if several fit). Reply with JSON: {"answers": ["...", ...]}.'
    )
    return _request(prompt, BlindAnswers, max_tokens)


def reveal_request(item: Item, shown: Reveal, named: list[str], max_tokens: int) -> ChatRequest:
    prompt = (
        f"Question: {item.question}\nYour answers before seeing the stored one: {'; '.join(named) or 'unsure'}\n"
        f"Stored answer: {item.answer}"
        + (f" (also called {'; '.join(item.aliases)})" if item.aliases else "")
        + f"\nHow it was built: {shown.path or '(not shown)'}\nEvidence: {shown.evidence or '(none here)'}\n\n"
        "Step 2: mark right, only, rating, other_answers and note as the rubric says. Reply with JSON: "
        '{"right": true|false, "only": true|false, "rating": "good"|"ok"|"bad", "other_answers": [...], '
        '"note": "..."}.'
    )
    return _request(prompt, Verdict, max_tokens)


def _request(prompt: str, reply: type[BaseModel], max_tokens: int) -> ChatRequest:
    """The rubric as the system message, `prompt` as the user's, the reply held to `reply`'s schema."""
    return ChatRequest(
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
        sampling=SamplingParams(temperature=0.0, max_tokens=max_tokens),
        json_schema=reply.model_json_schema(),
        stage=STAGE,
    )


async def judge_sample(
    client: LLMClient,
    sample: AuditSample,
    items: dict[str, Item],
    shown: dict[str, Reveal],
    max_tokens: int = 400,
) -> list[SheetRow]:
    """The model's filled sheet for `sample`: every item read blind, then revealed."""
    entries = sample.items
    blind = await complete_structured(
        client, [blind_request(items[entry.item_id].question, max_tokens) for entry in entries], BlindAnswers
    )
    named = [result.value.answers if isinstance(result, Structured) else [] for result in blind]
    revealed = await complete_structured(
        client,
        [
            reveal_request(items[entry.item_id], shown[entry.item_id], answers, max_tokens)
            for entry, answers in zip(entries, named, strict=True)
        ],
        Verdict,
    )
    failed = [
        f"{entry.sheet_id} ({step}): {result.reason}"
        for step, results in (("blind", blind), ("revealed", revealed))
        for entry, result in zip(entries, results, strict=True)
        if not isinstance(result, Structured)
    ]
    if failed:
        raise JudgeFailed(
            f"the judge gave no verdict on {len(failed)} of {len(entries)} items ({', '.join(failed[:3])}); "
            "nothing was stored; its answers so far are cached, so running it again pays only for the rest"
        )
    rows = []
    for number, (entry, answers, result) in enumerate(zip(entries, named, revealed, strict=True), start=1):
        assert isinstance(result, Structured)
        verdict = result.value
        rows.append(
            SheetRow(
                number=number,
                sheet_id=entry.sheet_id,
                rating=verdict.rating,
                right=verdict.right,
                only=verdict.only,
                reader_answers=[answer.strip() for answer in answers if answer.strip()],
                other_answers=[answer.strip() for answer in verdict.other_answers if answer.strip()],
                note=" ".join(verdict.note.split()),
            )
        )
    return rows

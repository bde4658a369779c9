"""The LLM verbalizer: the generator model rewrites a template question into fluent English.

The template question already states every cue correctly; the model only rephrases it, in one
batched call for all items (structured JSON output). A rephrasing is kept only if it still names
every cue's anchor (no cue dropped), keeps most of its content words (no fact dropped), adds no
name and no number the construction does not have (a model once added an invented film as a
constraint), names neither the answer nor a hidden intermediate (the leakage filter's own check,
aliases and names inside names included), and is a question; otherwise the item keeps its
template question and the reason is counted. With a judge model (generators.rephrase_judge), a
rephrasing that passes these checks is kept only if the judge also finds it asks the same thing.
A rejected rephrasing is kept in the item's metadata (`rephrasing_rejected`) with its reason, for SQL.
A small model (the embedded SmolLM2) mostly falls back: the template carries quality where the model
cannot, and the counts say so.
"""

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel, Field

from synth.contract.matching import mentions
from synth.filters.leakage import LeakageFilter
from synth.generators.rephrase_judge import Equivalence, RephraseJudge
from synth.hashing import content_hash
from synth.llm.client import LLMClient
from synth.llm.structured import Structured, complete_structured
from synth.llm.types import ChatRequest, SamplingParams
from synth.schemas import Item

STAGE = "verbalize"
MIN_CONTENT_RECALL = 0.6
"""Share of the template's content words a rephrasing must keep: a rewrite that drops facts
("Who produced The Notebook?" for a three-hop question) asks something else."""
_WH_QUESTION = re.compile(r"^(?:\w+\s+){0,2}(?:which|what|who|whom|whose|where|when)\b", re.IGNORECASE)
_STOPWORDS = frozenset(
    "the and that which who what whose where when was were is are has have had for from with into "
    "its his her their this these those than then also been being one".split()
)

SYSTEM = (
    "You rewrite quiz questions so they read naturally. Keep every fact and every proper name exactly as "
    'written, add no facts, do not answer the question, and reply with JSON: {"question": "..."}.'
)


class Rephrasing(BaseModel):
    question: str = Field(min_length=10, max_length=500)


@dataclass
class VerbalizeReport:
    rephrased: int = 0
    judged: int = 0
    """Rephrasings the judge model was asked about."""
    fallbacks: Counter = field(default_factory=Counter)
    """Why items kept their template question: dropped_cue, answer_in_question, invalid_json,
    judge_not_equivalent, judge_<failure> (the judge gave no verdict), ..."""


class LLMVerbalizer:
    def __init__(
        self,
        client: LLMClient,
        names: Callable[[str], str],
        temperature: float = 0.7,
        max_tokens: int = 128,
        all_names: Callable[[str], list[str]] | None = None,
        judge: RephraseJudge | None = None,
    ):
        """`names(id)`: an entity's name; `all_names(id)`: with its aliases (for the leak check);
        `judge`: a model that confirms each rephrasing that passes the checks."""
        self.client = client
        self.judge = judge
        self.names = names
        self.leakage = LeakageFilter(all_names or names)
        self.temperature = temperature
        self.max_tokens = max_tokens

    @property
    def name(self) -> str:
        return f"llm:{self.client.model_id}"

    def request(self, item: Item) -> ChatRequest:
        anchors = [self.names(entity) for constraint in item.constraints for entity in constraint.named]
        prompt = (
            f"Question: {item.question}\n"
            f"Names that must stay, word for word: {'; '.join(anchors)}\n"
            "Rewrite the question as one fluent question."
        )
        return ChatRequest(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            # A seed per item: reruns reproduce (and hit the cache), items differ from each other.
            sampling=SamplingParams(
                temperature=self.temperature, max_tokens=self.max_tokens, seed=int(content_hash(item.id, length=8), 16)
            ),
            stage=STAGE,
        )

    async def rephrase(self, items: list[Item]) -> tuple[list[Item], VerbalizeReport]:
        """Items with LLM questions where those pass the checks, template questions elsewhere."""
        report = VerbalizeReport()
        results = await complete_structured(
            self.client, [self.request(item) for item in items], Rephrasing, max_retries=1
        )
        phrased = list(items)
        passed = []  # (position, question, raw output) of rephrasings that pass the textual checks
        for position, (item, result) in enumerate(zip(items, results)):
            if not isinstance(result, Structured):
                report.fallbacks[result.reason] += 1
                continue
            question = " ".join(result.value.question.split())
            reason = self.rejection(item, question)
            if reason is not None:
                report.fallbacks[reason] += 1
                phrased[position] = _rejected(item, question, reason)
                continue
            passed.append((position, question, result.raw))
        verdicts: list[Equivalence | str | None] = [None] * len(passed)
        if self.judge is not None:
            verdicts = [*await self.judge.verdicts([(items[position], question) for position, question, _ in passed])]
            report.judged += len(passed)
        for (position, question, raw), verdict in zip(passed, verdicts):
            item = phrased[position]
            if isinstance(verdict, str) or (verdict is not None and not verdict.equivalent):
                reason = f"judge_{verdict}" if isinstance(verdict, str) else "judge_not_equivalent"
                report.fallbacks[reason] += 1
                phrased[position] = _rejected(
                    item,
                    question,
                    reason,
                    verdict.problem if isinstance(verdict, Equivalence) else "",  # pyright: ignore[reportAttributeAccessIssue]
                )
                continue
            report.rephrased += 1
            models = {**item.provenance.models, "generator": self.client.model_id}
            if self.judge is not None:
                models["rephrase_judge"] = self.judge.model
            provenance = item.provenance.model_copy(
                update={"verbalizer": self.name, "raw_output": raw, "models": models}
            )
            phrased[position] = item.model_copy(
                update={
                    "question": question,
                    "provenance": provenance,
                    "metadata": {**item.metadata, "template_question": item.question},
                }
            )
        return phrased, report

    def rejection(self, item: Item, question: str) -> str | None:
        """Why a rephrasing cannot replace the template question, or None if it can."""
        if not question.endswith("?") or not _WH_QUESTION.match(question):
            return "not_a_question"  # the answer is an entity: a wh-question, not a yes/no one
        if any(
            not mentions(question, self.names(entity)) for constraint in item.constraints for entity in constraint.named
        ):
            return "dropped_cue"
        if content_recall(item.question, question) < MIN_CONTENT_RECALL:
            return "lost_content"
        if added_numbers(item.question, question):
            return "added_number"  # a year or count the construction does not have
        if added_names(item.question, question):
            return "added_name"  # an entity the construction does not have (an invented film as a constraint)
        verdict = self.leakage.check(item.model_copy(update={"question": question}))
        if isinstance(verdict, tuple):
            return verdict[1]
        return None


def _rejected(item: Item, rephrasing: str, reason: str, problem: str = "") -> Item:
    """The item with its template question, and the rephrasing that could not replace it."""
    rejected = {"rephrasing": rephrasing, "reason": reason, **({"problem": problem} if problem else {})}
    return item.model_copy(update={"metadata": {**item.metadata, "rephrasing_rejected": rejected}})


def added_numbers(template: str, rephrased: str) -> set[str]:
    """Numbers in the rephrasing that the template does not have."""
    return set(re.findall(r"\d+(?:[.,]\d+)?", rephrased)) - set(re.findall(r"\d+(?:[.,]\d+)?", template))


_NAME = re.compile(r"(?<![.?!]\s)(?<!^)\b[A-Z][\w'&-]*(?:\s+(?:of|the|and|de|la|[A-Z][\w'&-]*))*")


def added_names(template: str, rephrased: str) -> set[str]:
    """Capitalized phrases (names) in the rephrasing, after its first word, none of whose words the
    template has: a rephrasing may reorder the names it was given, never bring new ones."""
    known = {word.lower() for word in re.findall(r"[\w'&-]+", template)}
    found = set()
    for match in _NAME.finditer(rephrased):
        words = [word for word in re.findall(r"[\w'&-]+", match.group(0)) if word[:1].isupper()]
        if words and not any(word.lower() in known for word in words):
            found.add(match.group(0))
    return found


def _content_stems(text: str) -> set[str]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {word[:5] for word in words if len(word) >= 3 and word not in _STOPWORDS}


def content_recall(template: str, rephrased: str) -> float:
    """Share of the template's content words (compared by their first five letters, a crude
    stem) that the rephrasing still contains."""
    wanted = _content_stems(template)
    return len(wanted & _content_stems(rephrased)) / len(wanted) if wanted else 1.0

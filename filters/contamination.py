"""Contamination: drop items that restate a question of an evaluation set the user points to.

Two signals, so a benchmark file without answers still catches reworded questions:

- Word n-grams. With the same answer (normalized, any alias), `threshold` of the smaller n-gram set
  must be shared (a short benchmark question inside a longer generated one counts); without an
  answer match, `strict_threshold` of the larger set (the same question, near verbatim).
  N-grams shared by many benchmark questions ("which film was") are not indexed: they say nothing.
- Sentence embeddings (the bundled all-MiniLM-L6-v2). Against a benchmark question without an
  answer, cosine `similarity` or more with `word_overlap` of the rarer words in common, or cosine
  `similarity_alone` without, is the same question in other words. Against one with answers,
  `answer_similarity` with the same answer (a reworded question with another answer is another
  question, as with n-grams).

Measured with benchmarks/bench_contamination.py (30 planted questions reworded by hand, against 900
template questions of the bundled graph plus the 30 originals, in HotpotQA JSON, Search-R1 JSONL,
MuSiQue JSONL and CSV layouts): see the README's "Curate data you already have" for the figures.
The verdict names the benchmark file, item id, signal and score.
"""

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import Field

from synth.contract.matching import normalize_answer
from synth.evalsets import BenchmarkItem, load_benchmark
from synth.filters.base import CheckResult, Filter
from synth.filters.checks import CheckConfig, CheckScope
from synth.schemas import FilterVerdict, Item
from synth.search.similar import QuestionIndex


class ContaminationConfig(CheckConfig):
    kind: Literal["contamination"] = "contamination"
    summary = "Questions that restate one of the evaluation files named in `benchmarks` (off without files)."
    benchmarks: list[Path] = Field(
        default=[], description="Evaluation files (JSONL, JSON, CSV, TSV, Parquet) to keep items out of."
    )
    ngram: int = Field(
        default=2, ge=1, le=8, description="Word n-gram length (2 survives rewording; longer is stricter)."
    )
    threshold: float = Field(
        default=0.5, gt=0.0, le=1.0, description="N-gram overlap that, with the same answer, is contamination."
    )
    strict_threshold: float = Field(
        default=0.8, gt=0.0, le=1.0, description="N-gram overlap that is contamination whatever the answer."
    )
    similarity: float = Field(
        default=0.8,
        ge=0.0,
        le=1.0,
        description="Embedding cosine at which a question restates a benchmark question whatever the answer "
        "(with word_overlap); 0 turns the embedding check off.",
    )
    similarity_alone: float = Field(
        default=0.9,
        ge=0.0,
        le=1.0,
        description="Embedding cosine that alone is the same question (no shared words needed): rewordings that "
        "change every name's form (Brazil / Brazilians).",
    )
    word_overlap: float = Field(
        default=0.3,
        ge=0.0,
        le=1.0,
        description="Share of the rarer words (IDF-weighted, of the shorter question) an embedding match must also "
        "have in common.",
    )
    answer_similarity: float = Field(
        default=0.7, ge=0.0, le=1.0, description="Embedding cosine that, with the same answer, is contamination."
    )

    def build(self, scope: CheckScope) -> "ContaminationFilter | None":
        if not self.benchmarks:
            return None
        return ContaminationFilter(self, cache_dir=scope.settings.cache_dir / "contamination")


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = normalize_answer(text).split()
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[index : index + n]) for index in range(len(words) - n + 1)}


class ContaminationFilter(Filter):
    name = "contamination"

    def __init__(
        self,
        config: ContaminationConfig,
        benchmark: list[BenchmarkItem] | None = None,
        cache_dir: Path | None = None,
    ):
        """`cache_dir`: where the benchmark questions' embeddings are kept between runs."""
        self.config = config
        self.benchmark = (
            benchmark if benchmark is not None else [row for path in config.benchmarks for row in load_benchmark(path)]
        )
        self.cache_dir = cache_dir
        self.grams = [ngrams(row.question, config.ngram) for row in self.benchmark]
        self.answers = [{normalize_answer(answer) for answer in row.answers} - {""} for row in self.benchmark]
        postings: dict[tuple[str, ...], list[int]] = {}
        for index, grams in enumerate(self.grams):
            for gram in grams:
                postings.setdefault(gram, []).append(index)
        too_common = max(50, len(self.benchmark) // 100)
        self.postings = {gram: rows for gram, rows in postings.items() if len(rows) <= too_common}
        self._index: QuestionIndex | None = None

    @property
    def index(self) -> QuestionIndex:
        """The benchmark questions embedded (on first use: the n-gram check alone needs no model)."""
        if self._index is None:
            self._index = QuestionIndex([row.question for row in self.benchmark], self.cache_dir)
        return self._index

    def check(self, item: Item) -> CheckResult:
        return self._judge([item])[0]

    def apply(self, items: Sequence[Item]) -> list[FilterVerdict]:
        return [self._verdict(item, result) for item, result in zip(items, self._judge(list(items)))]

    def _judge(self, items: list[Item]) -> list[CheckResult]:
        config = self.config
        answers = [{normalize_answer(answer) for answer in item.answers} for item in items]
        found = [self._by_words(item, accepted) for item, accepted in zip(items, answers)]
        embedded = config.similarity > 0 or config.answer_similarity > 0
        left = [position for position, hit in enumerate(found) if hit is None]
        if embedded and self.benchmark and left:  # only what the words did not catch is embedded
            neighbours = self.index.nearest([items[position].question for position in left])
            for position, near in zip(left, neighbours):
                found[position] = self._by_meaning(items[position], answers[position], near)
        return [True if hit is None else (False, "contaminated", hit) for hit in found]

    def _by_words(self, item: Item, answers: set[str]) -> dict | None:
        grams = ngrams(item.question, self.config.ngram)
        shared = Counter(row for gram in grams for row in self.postings.get(gram, ()))
        best = None
        for row, count in shared.items():
            answer_match = bool(answers & self.answers[row])
            sizes = (len(grams), len(self.grams[row]))
            # With the answer in common, a short benchmark question inside a longer one counts;
            # without it, both questions must be mostly the same words.
            overlap = count / max(1, min(sizes) if answer_match else max(sizes))
            needed = self.config.threshold if answer_match else self.config.strict_threshold
            if overlap >= needed and (best is None or (answer_match, overlap) > best[:2]):
                best = (answer_match, overlap, row)
        if best is None:
            return None
        answer_match, overlap, row = best
        return self._details(row, "ngram", overlap, answer_match)

    def _by_meaning(self, item: Item, answers: set[str], neighbours: list[tuple[int, float]]) -> dict | None:
        config = self.config
        with_answer, similar, alone, shared = (
            config.answer_similarity,
            config.similarity,
            config.similarity_alone,
            config.word_overlap,
        )
        for row, cosine in neighbours:
            if self.answers[row]:  # the benchmark knows its answer: another answer is another question
                if answers & self.answers[row] and with_answer and cosine >= with_answer:
                    return self._details(row, "embedding", cosine, True)
            elif similar and cosine >= similar:
                overlap = self.index.word_overlap(item.question, row)
                if cosine >= alone or overlap >= shared:
                    return {**self._details(row, "embedding", cosine, False), "word_overlap": round(overlap, 3)}
        return None

    def _details(self, row: int, signal: str, score: float, answer_match: bool) -> dict:
        match = self.benchmark[row]
        return {
            "benchmark": match.source,
            "benchmark_id": match.id,
            "benchmark_question": match.question,
            "signal": signal,
            "overlap" if signal == "ngram" else "similarity": round(score, 3),
            "answer_match": answer_match,
        }

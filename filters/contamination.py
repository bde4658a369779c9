"""Contamination: drop items that restate a question of an evaluation set the user points to.

A generated question matches a benchmark question when their word n-grams overlap. With the same
answer (normalized, any alias), `threshold` of the smaller n-gram set must be shared (so a short
benchmark question inside a longer generated one counts); without an answer match,
`strict_threshold` of the larger set, since a reworded question with another answer is usually a
different question. The verdict names the benchmark file, item id and overlap.
N-grams shared by many benchmark questions ("which film was") are not indexed: they say nothing.
"""

from collections import Counter
from pathlib import Path

from pydantic import Field
from synth.filters.base import CheckResult, Filter
from synth.schemas import Item

from synth.config import FrozenConfig
from synth.evalsets import BenchmarkItem, load_benchmark
from synth.matching import normalize_answer


class ContaminationConfig(FrozenConfig):
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


def ngrams(text: str, n: int) -> set[tuple[str, ...]]:
    words = normalize_answer(text).split()
    if len(words) < n:
        return {tuple(words)} if words else set()
    return {tuple(words[index : index + n]) for index in range(len(words) - n + 1)}


class ContaminationFilter(Filter):
    name = "contamination"

    def __init__(self, config: ContaminationConfig, benchmark: list[BenchmarkItem] | None = None):
        self.config = config
        self.benchmark = (
            benchmark if benchmark is not None else [row for path in config.benchmarks for row in load_benchmark(path)]
        )
        self.grams = [ngrams(row.question, config.ngram) for row in self.benchmark]
        self.answers = [{normalize_answer(answer) for answer in row.answers} - {""} for row in self.benchmark]
        postings: dict[tuple[str, ...], list[int]] = {}
        for index, grams in enumerate(self.grams):
            for gram in grams:
                postings.setdefault(gram, []).append(index)
        too_common = max(50, len(self.benchmark) // 100)
        self.postings = {gram: rows for gram, rows in postings.items() if len(rows) <= too_common}

    def check(self, item: Item) -> CheckResult:
        grams = ngrams(item.question, self.config.ngram)
        shared = Counter(row for gram in grams for row in self.postings.get(gram, ()))
        answers = {normalize_answer(answer) for answer in item.answers}
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
            return True
        answer_match, overlap, row = best
        match = self.benchmark[row]
        return (
            False,
            "contaminated",
            {
                "benchmark": match.source,
                "benchmark_id": match.id,
                "overlap": round(overlap, 3),
                "answer_match": answer_match,
            },
        )

"""Near-duplicate removal: questions that say almost the same thing, within a run and against
earlier versions of the same dataset.

Questions become sets of word shingles (normalized words and word pairs, so "Which movie ..." and
"Which film ..." still share most of them). MinHash LSH (datasketch, the standard implementation,
as in text-dedup and the BigCode pipeline) proposes candidate pairs in near-constant time per
item; each candidate is then confirmed by the exact Jaccard similarity of the two shingle sets,
so the threshold means what it says and LSH misses only pairs near the threshold.

By default two questions are duplicates only if they also share an answer: template questions
about different anchors ("... born in Springfield?" / "... born in Shelbyville?") differ by one
name, so word overlap alone would call distinct questions duplicates.
"""

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import Field

from synth.contract.matching import normalize_answer
from synth.errors import ConfigError
from synth.filters.base import CheckResult, Filter
from synth.filters.checks import CheckConfig, CheckScope, Questions
from synth.schemas import FilterVerdict, Item
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.reader import iter_records


class NearDupConfig(CheckConfig):
    kind: Literal["near_dup"] = "near_dup"
    summary = "Questions that say almost the same as a kept one, an earlier version's or another dataset's."
    threshold: float = Field(
        default=0.6,
        gt=0.0,
        le=1.0,
        description="Jaccard similarity of word shingles at which two questions are duplicates.",
    )
    num_perm: int = Field(default=64, ge=16, description="MinHash permutations: more = fewer missed pairs, slower.")
    against_earlier_versions: bool = Field(
        default=True, description="Also drop questions near one of an earlier version of the same dataset."
    )
    same_answer: bool = Field(
        default=True, description="Only questions with a common (normalized) answer can be duplicates."
    )
    against: list[str] = Field(
        default=[], description="Datasets (NAME or NAME@VERSION) whose items near-duplicates are also looked for in."
    )

    def build(self, scope: CheckScope) -> "NearDupFilter":
        earlier = [row for ref in self.against for row in questions_of(scope.settings, ref)]
        if self.against_earlier_versions:
            earlier += scope.earlier_questions()
        earlier += [(item.id, item.question, item.answers) for item in scope.earlier_items]
        return NearDupFilter(self, earlier)


def questions_of(settings: Settings, ref: str) -> Questions:
    """(id, question, answers) of every item of `ref`: a dataset's published versions, or one version."""
    with Catalog.open(settings, read_only=True) as catalog:
        versions = [catalog.resolve(ref)] if "@" in ref else catalog.versions(ref)
    if not versions:
        raise ConfigError(f"against: no published version of {ref!r} (see `synth datasets list`)")
    return [
        (item.id, item.question, item.answers)
        for version in versions
        for item in iter_records(settings, version, "items")
    ]


def shingles(text: str) -> set[str]:
    words = normalize_answer(text).split()
    return set(words) | {f"{first} {second}" for first, second in zip(words, words[1:])}


def jaccard(first: set[str], second: set[str]) -> float:
    return len(first & second) / len(first | second) if first or second else 1.0


class NearDupFilter(Filter):
    """Stateful across calls, like exact dedup: every kept question is indexed for later ones."""

    name = "near_dup"

    def __init__(self, config: NearDupConfig = NearDupConfig(), earlier: Iterable[tuple[str, str, list[str]]] = ()):
        """`earlier`: (item id, question, answers) of earlier versions; matches with those are
        reported as near_duplicate_of_earlier_version."""
        from datasketch import MinHashLSH

        self.config = config
        self.index = MinHashLSH(threshold=config.threshold, num_perm=config.num_perm)
        self.shingles: dict[str, set[str]] = {}
        self.answers: dict[str, set[str]] = {}
        self.earlier: set[str] = set()
        earlier = list(earlier)
        token_sets = [shingles(question) for _, question, _ in earlier]
        for (item_id, _, answers), tokens, minhash in zip(
            earlier, token_sets, self._minhashes(token_sets) if earlier else []
        ):
            self._add(f"earlier:{item_id}", tokens, _normalized(answers), minhash)
            self.earlier.add(f"earlier:{item_id}")

    def _minhashes(self, token_sets: list[set[str]]) -> list:
        from datasketch import MinHash

        return MinHash.bulk(
            [[token.encode() for token in sorted(tokens)] for tokens in token_sets], num_perm=self.config.num_perm
        )

    def _add(self, key: str, tokens: set[str], answers: set[str], minhash=None) -> None:
        if key in self.shingles:
            return
        self.shingles[key] = tokens
        self.answers[key] = answers
        self.index.insert(key, minhash if minhash is not None else self._minhashes([tokens])[0])

    def check(self, item: Item) -> CheckResult:
        tokens = shingles(item.question)
        return self._decide(item, tokens, self._minhashes([tokens])[0])

    def apply(self, items: Sequence[Item]) -> list[FilterVerdict]:
        """Hashes the whole batch at once (datasketch's vectorized bulk path), then decides in order."""
        token_sets = [shingles(item.question) for item in items]
        minhashes = self._minhashes(token_sets) if items else []
        return [
            self._verdict(item, self._decide(item, tokens, minhash))
            for item, tokens, minhash in zip(items, token_sets, minhashes)
        ]

    def _decide(self, item: Item, tokens: set[str], minhash) -> CheckResult:
        answers = _normalized(item.answers)
        best, best_similarity = None, 0.0
        for key in map(str, self.index.query(minhash)):
            if self.config.same_answer and not answers & self.answers[key]:
                continue
            similarity = jaccard(tokens, self.shingles[key])
            if similarity >= self.config.threshold and (similarity, key) > (best_similarity, best or ""):
                best, best_similarity = key, similarity
        if best is not None and best != item.id:
            reason = "near_duplicate_of_earlier_version" if best in self.earlier else "near_duplicate"
            return (
                False,
                reason,
                {"duplicate_of": best.removeprefix("earlier:"), "similarity": round(best_similarity, 3)},
            )
        self._add(item.id, tokens, answers, minhash)
        return True


def _normalized(answers: Iterable[str]) -> set[str]:
    return {normalize_answer(answer) for answer in answers} - {""}

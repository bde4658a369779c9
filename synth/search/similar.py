"""Questions that ask the same thing in other words: sentence embeddings (the bundled
all-MiniLM-L6-v2) compared by cosine, with the rarer words two questions share as a second check.

Used by the contamination filter, whose benchmark files often carry no answers. The embeddings of a
set of questions are cached under `cache_dir`, keyed by their content, so a benchmark file is
embedded once.
"""

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from synth.contract.matching import normalize_answer
from synth.hashing import content_hash
from synth.search.embeddings import load_embedder

BATCH = 64


class QuestionIndex:
    """The embeddings of a fixed set of questions and the document frequency of their words."""

    def __init__(self, questions: Sequence[str], cache_dir: Path | None = None):
        self.questions = list(questions)
        self._model = None
        self.vectors = self._cached(cache_dir) if cache_dir is not None else self.encode(self.questions)
        self.words = [set(normalize_answer(question).split()) for question in self.questions]
        frequency = Counter(word for words in self.words for word in words)
        total = len(self.questions)
        self.idf = {word: math.log((total + 1) / (count + 1)) + 1.0 for word, count in frequency.items()}
        self._unseen = math.log(total + 1) + 1.0

    def encode(self, questions: Sequence[str]) -> np.ndarray:
        if not questions:
            return np.zeros((0, 384), dtype=np.float32)
        if self._model is None:
            self._model, _ = load_embedder()
        vectors = self._model.encode(
            list(questions), batch_size=BATCH, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(vectors, dtype=np.float32)

    def _cached(self, cache_dir: Path) -> np.ndarray:
        path = Path(cache_dir) / f"questions-{content_hash(self.questions)}.npy"
        if path.is_file():
            try:
                vectors = np.load(path)
                if vectors.shape[0] == len(self.questions):
                    return vectors
            except (OSError, ValueError):  # a damaged cache file is rebuilt
                pass
        vectors = self.encode(self.questions)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp.npy")
        np.save(temporary, vectors)
        temporary.replace(path)
        return vectors

    def nearest(self, questions: Sequence[str], k: int = 3) -> list[list[tuple[int, float]]]:
        """For each question, the `k` most similar indexed questions as (position, cosine)."""
        if not self.questions or not questions:
            return [[] for _ in questions]
        similarity = self.encode(questions) @ self.vectors.T
        k = min(k, similarity.shape[1])
        top = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
        return [
            sorted(((int(j), float(similarity[i, j])) for j in row), key=lambda pair: -pair[1])
            for i, row in enumerate(top)
        ]

    def word_overlap(self, question: str, position: int) -> float:
        """The rarer words the two questions share: IDF-weighted, over the smaller question's words."""
        words, other = set(normalize_answer(question).split()), self.words[position]
        weight = lambda group: sum(self.idf.get(word, self._unseen) for word in group)  # noqa: E731
        smaller = min(weight(words), weight(other))
        return weight(words & other) / smaller if smaller else 0.0

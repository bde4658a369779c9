"""Whether two entities' names overlap: one name (or alias) inside the other, by whole words.

A question that names "Newfoundland Time Zone" has said "Newfoundland"; one that names "Free jazz"
has said "Jazz". Names are compared as normalized token sequences (case, punctuation and articles
ignored), so "Washington" is inside "University of Washington" but "Paris" is not inside
"Parisian". Construction uses this to never pick such a cue, and the leakage filter to check.
"""

import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from synth.contract.matching import normalize_answer


def token_sequence(name: str) -> str:
    """ " university of washington " style: normalized words with a space on each side."""
    words = normalize_answer(re.sub(r"[^\w\s]", " ", name)).split()  # "Austria-Hungary" holds "Austria"
    return f" {' '.join(words)} " if words else ""


def token_sequences(name: str) -> tuple[str, ...]:
    """The name's token sequence with punctuation as a space and with punctuation dropped, so "B.C."
    is inside "BC Lions" as the leakage filter's matching (punctuation dropped) sees it, and
    "Austria" inside "Austria-Hungary" as a reader sees it."""
    joined = normalize_answer(name)
    return tuple(
        dict.fromkeys(sequence for sequence in (token_sequence(name), f" {joined} " if joined else "") if sequence)
    )


def sequences_of(names: Iterable[str]) -> tuple[str, ...]:
    return tuple(sequence for name in names for sequence in token_sequences(name))


def overlap(first: Iterable[str], second: Iterable[str]) -> str | None:
    """The shared words when a name in `first` contains, or is contained in, a name in `second`."""
    return shared_words(sequences_of(first), sequences_of(second))


def shared_words(first: tuple[str, ...], second: tuple[str, ...]) -> str | None:
    """`overlap` over names already turned into token sequences."""
    for a in first:
        for b in second:
            if a and b and (a in b or b in a):
                return (a if len(a) <= len(b) else b).strip()
    return None


class NameOverlap:
    """`overlap(a, b)` for entity ids, over every name an entity has (`names(id)` -> list); each
    entity's names are normalized once, since construction asks about the same entities often."""

    def __init__(self, names: Callable[[str], list[str]]):
        self._names = lru_cache(maxsize=100_000)(lambda entity_id: tuple(names(entity_id)))
        self.sequences = lru_cache(maxsize=100_000)(lambda entity_id: sequences_of(self._names(entity_id)))
        """entity id -> the token sequences of its names."""
        self.words = lru_cache(maxsize=100_000)(
            lambda entity_id: frozenset(word for sequence in self.sequences(entity_id) for word in sequence.split())
        )
        """entity id -> every word of its names (two names that share no word cannot overlap)."""
        self._words_of = lru_cache(maxsize=10_000)(
            lambda entity_ids: frozenset().union(*(self.words(entity_id) for entity_id in entity_ids))
        )
        """A tuple of entity ids -> every word of their names (construction asks about one walk's often)."""

    def words_of(self, entity_ids: Iterable[str]) -> frozenset[str]:
        """Every word of these entities' names."""
        return self._words_of(tuple(entity_ids))

    def names(self, entity_id: str) -> tuple[str, ...]:
        return self._names(entity_id)

    def overlap(self, first: str, second: str) -> str | None:
        if first == second:
            return None
        return shared_words(self.sequences(first), self.sequences(second))

    def any_overlap(self, entity_id: str, others: Iterable[str]) -> bool:
        others = tuple(others)
        if self.words(entity_id).isdisjoint(self._words_of(others)):
            return False  # names that share no word cannot overlap: most checks end here
        return any(self.overlap(entity_id, other) is not None for other in others)

    def overlapping(self, others: Iterable[str]) -> Callable[[str], bool]:
        """`any_overlap(entity, others)` for many entities against the same `others` (construction checks
        every fact of a walk's entities against its hidden ones): their words and names are read once."""
        others = tuple(others)
        words, sequences = (
            self._words_of(others),
            tuple(sequence for other in others for sequence in self.sequences(other)),
        )

        def overlaps(entity_id: str) -> bool:
            if self.words(entity_id).isdisjoint(words):
                return False
            if entity_id in others:  # an entity does not overlap itself: compare it with the others only
                return self.any_overlap(entity_id, others)
            return shared_words(self.sequences(entity_id), sequences) is not None

        return overlaps

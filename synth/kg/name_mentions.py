"""Which of the world's entity names a text writes as names: what the `unseen_entity` check looks for
in what an agent says and searches.

The world's names include common words ("Iron", "Satire", "Film director"), so a stretch of text
counts as naming an entity only when it is written as a name: each of its words capitalized (short
linking words such as "of" aside), and, for a one-word name, not the first word of a sentence, a
line or a quoted query, and at least MIN_ONE_WORD characters long ("I" is a film's title). Numbers
never count. A lower-case search ("liverpool fc") is therefore not
read as naming anything: the check misses some guesses rather than reject honest text.
"""

import re
from collections.abc import Iterable

from synth.contract.portable import normalize_answer
from synth.kg.names import token_sequence

LINKING = frozenset({"of", "and", "de", "la", "le", "du", "von", "van", "der", "den", "del", "da", "for", "in", "on"})
"""Lower-case words a name may hold between capitalized ones ("University of Washington")."""
_ARTICLES = frozenset({"a", "an", "the"})
_WORD = re.compile(r"\w+")  # "Quaid's" is "Quaid" and "s", as `token_sequence` reads it
_BREAK = re.compile(r"[.!?:;\n\"“”(\[{]\s*$")
MAX_WORDS = 8
MIN_ONE_WORD = 3


class WorldNames:
    """The world's entity names (and aliases), normalized, up to MAX_WORDS words long."""

    def __init__(self, names: Iterable[str]):
        self.names: set[str] = set()
        self.prefixes: set[str] = set()
        """Every name's leading words ("university", "university of", ...): where a match may go on."""
        for name in names:
            normal = token_sequence(name).strip()
            words = normal.split()
            if words and len(words) <= MAX_WORDS and not normal.replace(" ", "").isdigit():
                self.names.add(normal)
                self.prefixes.update(" ".join(words[:size]) for size in range(1, len(words) + 1))

    @classmethod
    def of_graph(cls, graph) -> "WorldNames":
        """Every name and alias of a `KnowledgeGraph`'s entities."""
        return cls(name for entity_id in graph.entities for name in graph.names(entity_id))

    def named_in(self, text: str) -> set[str]:
        """The normalized world names `text` writes as names (see the module's rule), the longest
        where they overlap."""
        words = []  # (normalized word, as written, where it starts in `text`)
        for match in _WORD.finditer(text):
            written = match.group()
            normal = written.casefold() if written.isascii() and written.isalnum() else normalize_answer(written)
            if not normal or normal in _ARTICLES:
                continue
            words.append((normal, written, match.start()))
        found: set[str] = set()
        position = 0
        while position < len(words):
            size = self._longest_name(text, words, position)
            if size:
                found.add(" ".join(word for word, _, _ in words[position : position + size]))
            position += max(size, 1)
        return found

    def _longest_name(self, text: str, words: list[tuple[str, str, int]], position: int) -> int:
        """How many words from `position` on are the longest world name written as a name (0: none)."""
        first, written, at = words[position]
        if not written[:1].isupper() or written.isdigit():  # a name starts with a capital, never a number
            return 0
        key, best = first, 0
        if key in self.names and len(first) >= MIN_ONE_WORD and not _starts_sentence(text, at):
            best = 1
        for size in range(2, MAX_WORDS + 1):
            end = position + size - 1
            if end >= len(words) or key not in self.prefixes:
                break
            word, written, _ = words[end]
            if not (written[:1].isupper() or word in LINKING):
                break
            key = f"{key} {word}"
            if key in self.names and words[end][1][:1].isupper():
                best = size  # (a name ends on a capitalized word: "University of Washington", not "... of")
        return best


def _starts_sentence(text: str, at: int) -> bool:
    """Whether the word at `at` opens a sentence, a line or a quoted query."""
    return at == 0 or bool(_BREAK.search(text[max(0, at - 3) : at]))

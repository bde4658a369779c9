"""Answer matching shared by scorers, solvers and filters: normalized exact match, aliases and token F1,
and whether a text names a name (leakage checks, the reader baseline, guidance).

The functions live in `synth.contract.portable`, the standard-library file the verl export copies as
its reward, so synth's panel, rejection sampling and the RL reward match answers identically.
"""

import re
import unicodedata

from synth.contract.portable import match_answer, normalize_answer, token_f1

__all__ = ["match_answer", "normalize_answer", "token_f1", "plain_variants", "mentions", "normalized", "contains_name"]

_TYPOGRAPHIC = str.maketrans({"‘": "'", "’": "'", "“": '"', "”": '"', "–": "-", "—": "-"})


def plain_variants(answers: list[str]) -> list[str]:
    """`answers` followed by their accent-free, plain-punctuation spellings where those differ
    ("Zoë Saldaña" -> "Zoe Saldana"), so scorers without Unicode folding (Search-R1's and verl's
    exact match) accept the plain spelling too. Order kept, duplicates dropped."""
    out: list[str] = []
    for answer in answers:
        decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", answer))
        plain = "".join(c for c in decomposed if not unicodedata.combining(c)).translate(_TYPOGRAPHIC)
        for spelling in (answer, plain):
            if spelling not in out:
                out.append(spelling)
    return out


def mentions(text: str, name: str) -> bool:
    """`text` names `name` as whole words, normalized (a possessive counts: "Coolio's" mentions Coolio)."""
    return contains_name(normalized(text), name)


def normalized(text: str) -> str:
    """`text` as names are looked for in it: normalized like answers, with a possessive's "s" kept
    apart ("Coolio's birthplace" mentions Coolio; plain normalizing makes it "coolios")."""
    return normalize_answer(_possessive_apart(text))


def _possessive_apart(text: str) -> str:
    return re.sub(r"(?<=\w)['’]s\b", " s", text)


def contains_name(normalized_text: str, name: str) -> bool:
    """`name`, normalized as the text was (a possessive in it kept apart: "A Bug's Life" is found
    in a question that names it), as whole words in text already `normalized`."""
    needle = normalize_answer(_possessive_apart(name))
    return (
        bool(needle)
        and needle in normalized_text
        and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", normalized_text) is not None
    )

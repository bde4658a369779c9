"""Answer matching shared by scorers, solvers and filters: normalized exact match, aliases and token F1.

The functions live in `synth.contract.portable`, the standard-library file the verl export copies as
its reward, so synth's panel, rejection sampling and the RL reward match answers identically.
"""

import unicodedata

from synth.contract.portable import match_answer, normalize_answer, token_f1

__all__ = ["match_answer", "normalize_answer", "token_f1", "plain_variants"]

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

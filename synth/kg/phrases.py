"""Phrases for relations that arrive without any: read from the relation id itself.

`/people/person/place_of_birth` -> "has the place of birth" / "is the place of birth of";
`directed_by` -> "was directed by" / "directed"; `capital_of` -> "is the capital of" / "has the
capital"; verb phrases get a literal inverse (`located_in` -> "is the target of 'located in' from"). They are marked `auto` so `synth kg info` can say how many a relation table should replace:
questions read only as well as their relation phrases.
"""

import re


def humanize(relation_id: str) -> str:
    """The last segment of a relation id as lower-case words: `/film/film/directed_by` -> "directed by"."""
    segment = re.split(r"[/#.:]", relation_id.strip("/#.:"))[-1] or relation_id
    segment = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", segment)  # camelCase
    words = re.sub(r"[_\-\s]+", " ", segment).strip().lower()
    return words or relation_id


def auto_phrases(relation_id: str) -> tuple[str, str]:
    """(forward, inverse) for `head {forward} tail` and `tail {inverse} head`."""
    words = humanize(relation_id)
    if words.endswith(" by"):
        return f"was {words}", words[:-3]
    if words.endswith(" of"):
        return f"is the {words}", f"has the {words[:-3]}"
    first = words.split()[0]
    if first.endswith(("ed", "es", "ts", "ns", "ains")) or first in ("is", "has", "was"):
        # A verb phrase ("located in", "contains"): English offers no mechanical inverse.
        return words, f"is the target of '{words}' from"
    return f"has the {words}", f"is the {words} of"

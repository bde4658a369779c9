"""Phrases for relations that arrive without any: read from the relation id itself.

`directed_by` -> "was directed by" / "directed"; `written_by` -> "was written by" / "wrote";
`starred_actors` -> "starred" / "starred in" (role "actor");
`/people/person/place_of_birth` -> "has the place of birth" / "is the place of birth of" (role
"place of birth"); `capital_of` -> "is the capital of" / "has the capital"; `has_genre` -> "has
the genre" / "is the genre of"; `in_language` -> "is in the language" / "is the language of". A verb
phrase with no mechanical inverse (`located_in`) gets no inverse: questions then read "a city that
Berlin is located in". Marked `auto` so `synth kg info` can say how many a relation table should
replace: questions read only as well as their relation phrases.
"""

import re
from dataclasses import dataclass

_PAST_OF_PARTICIPLE = {
    "written": "wrote",
    "spoken": "spoke",
    "sung": "sang",
    "drawn": "drew",
    "taken": "took",
    "given": "gave",
    "shown": "showed",
    "known": "knew",
    "made": "made",
    "shot": "shot",
    "held": "held",
    "led": "led",
    "begun": "began",
    "chosen": "chose",
    "driven": "drove",
    "seen": "saw",
    "won": "won",
    "built": "built",
}


@dataclass(frozen=True)
class AutoPhrases:
    forward: str
    """For `head {forward} tail`."""
    inverse: str
    """For `tail {inverse} head`; "" when English has no mechanical inverse."""
    head_role: str = ""
    tail_role: str = ""


def humanize(relation_id: str) -> str:
    """The last segment of a relation id as lower-case words: `/film/film/directed_by` -> "directed by"."""
    segment = re.split(r"[/#.:]", relation_id.strip("/#.:"))[-1] or relation_id
    segment = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", segment)  # camelCase
    words = re.sub(r"[_\-\s]+", " ", segment).strip().lower()
    return words or relation_id


def _singular(words: str) -> str:
    head, _, last = words.rpartition(" ")
    if last.endswith("ies") and len(last) > 4:
        last = last[:-3] + "y"
    elif last.endswith("s") and not last.endswith(("ss", "us", "is")):
        last = last[:-1]
    return f"{head} {last}".strip()


def _is_verb(word: str) -> bool:
    return (
        word.endswith(("ed", "es", "ts", "ns", "ains")) or word in _PAST_OF_PARTICIPLE or word in ("is", "has", "was")
    )


def auto_phrases(relation_id: str) -> AutoPhrases:
    words = humanize(relation_id)
    first, _, rest = words.partition(" ")
    if words.endswith(" by"):
        participle = words[:-3]
        verb = participle.split()[0]
        past = _PAST_OF_PARTICIPLE.get(verb, verb) + participle[len(verb) :]
        return AutoPhrases(f"was {participle} by", past)
    if words.endswith(" of"):
        noun = words[:-3]
        return AutoPhrases(f"is the {noun} of", f"has the {noun}", head_role=noun)
    if first == "has" and rest:
        noun = _singular(rest)
        return AutoPhrases(f"has the {noun}", f"is the {noun} of", tail_role=noun)
    if first == "in" and rest:
        noun = _singular(rest)
        return AutoPhrases(f"is in the {noun}", f"is the {noun} of", tail_role=noun)
    if _is_verb(first) and rest and not rest.split()[-1].endswith("s"):
        return AutoPhrases(words, "")  # "located in": no mechanical inverse
    if first.endswith("ed") and rest and " " not in rest:  # `starred_actors`: "starred" X, X "starred in" it
        return AutoPhrases(first, f"{first} in", tail_role=_singular(rest))
    noun = _singular(words)
    return AutoPhrases(f"has the {noun}", f"is the {noun} of", tail_role=noun)

"""Small English helpers for the template phrasing: articles, possessives, reduced relatives.

Kept apart from the question builder so each rule has a name, a docstring and a test.
"""

import re

PREPOSITIONS = frozenset("in of on at by for to from with into about under over as".split())
_AUXILIARIES = ("was ", "is ", "were ", "are ")
_IRREGULAR_PARTICIPLES = frozenset(
    "born built written spoken shot made held sung drawn known given taken shown set led found "
    "begun done seen worn won sold told thought brought bought fought kept left lost met paid put read "
    "run sent spent stood struck taught understood had".split()
)


def article(noun: str) -> str:
    """ "a" or "an" by the noun's first sound (letters; good enough for type nouns)."""
    return "an" if noun[:1].lower() in "aeiou" else "a"


def with_article(noun: str, definite: bool) -> str:
    return f"the {noun}" if definite else f"{article(noun)} {noun}"


def possessive(name: str) -> str:
    """ "Steve Carell" -> "Steve Carell's"; "Dennis" -> "Dennis'"."""
    return f"{name}'" if name.endswith("s") else f"{name}'s"


def is_participle(word: str) -> bool:
    return word.endswith("ed") or word in _IRREGULAR_PARTICIPLES


def reduced_relative(phrase: str) -> str | None:
    """ "was directed by" -> "directed by", "is located in" -> "located in", "has been signed to" ->
    "signed to": the passive
    relative clause without "that was", or None when the phrase is not a passive."""
    if phrase.startswith(("has been ", "have been ")):  # "has been signed to" -> "signed to"
        phrase = "was " + phrase.split(" ", 2)[2]
    for auxiliary in _AUXILIARIES:
        if phrase.startswith(auxiliary):
            rest = phrase[len(auxiliary) :]
            first = rest.split(" ", 1)[0]
            if is_participle(first) and " " in rest:
                return rest
    return None


_NOT_PRESENT_VERBS = frozenset({"is", "was", "has", "does", "series", "species", "news"})


def reduced_active(phrase: str) -> str | None:
    """ "contains X" -> "containing X", "has the capital X" -> "with the capital X": an active
    present-tense relative clause without "that", or None when the phrase does not start with a
    present-tense verb ("died in", "was born in")."""
    first, _, rest = phrase.partition(" ")
    if first == "has" and rest and not is_participle(rest.split(" ", 1)[0]):
        return f"with {rest}"
    if not rest or not first.endswith("s") or first.endswith("ss") or first in _NOT_PRESENT_VERBS:
        return None
    stem = first[:-1]
    if stem.endswith("ie"):
        stem = stem[:-2] + "y"
    elif stem.endswith("e") and not stem.endswith(("ee", "ye", "oe")):
        stem = stem[:-1]
    return f"{stem}ing {rest}"


def without_object_noun(phrase: str) -> str:
    """Drop a trailing "the <noun>" that stands before a name ("belongs to the genre Drama") when a
    description takes the name's place: "belongs to" + "a genre that ..." (not "the genre a genre")."""
    head, separator, tail = phrase.rpartition(" the ")
    words = tail.split()
    if (
        separator
        and head
        and words
        and len(words) <= 3
        and words[-1] not in PREPOSITIONS
        and not words[-1].endswith(("ing", "ed"))  # "is the country containing": a verb, not a noun, ends it
        and all(w.replace("-", "").isalpha() for w in words)
    ):
        return head
    return phrase


def in_which(phrase: str) -> tuple[str, str] | None:
    """ "was born in" -> ("was", "born"): the parts of "In which city was X born?", or None when the
    phrase is not "<auxiliary> <participle> in"."""
    match = re.fullmatch(r"(was|is|were|are) (\w+) in", phrase)
    if match and is_participle(match.group(2)):
        return match.group(1), match.group(2)
    return None


def join_and(parts: list[str]) -> str:
    """ "a", "a and b", "a, b and c"; ", and" before the last part when an earlier part has its own
    "and", so the last part reads as being about the subject, not the nested entity."""
    if len(parts) == 1:
        return parts[0]
    joint = ", and " if any(" and " in part for part in parts[:-1]) else " and "
    return ", ".join(parts[:-1]) + joint + parts[-1]


def merge_shared(parts: list[str]) -> list[str]:
    """Clauses that repeat one phrase up to its preposition become one clause with a coordinated
    object: "is a genre of X", "is a genre of Y" -> "is a genre of both X and Y"."""
    if len(parts) < 2:
        return parts
    split = [part.split(" ") for part in parts]
    shared = 0
    while all(len(words) > shared + 1 for words in split) and len({tuple(words[: shared + 1]) for words in split}) == 1:
        shared += 1
    while shared and split[0][shared - 1] not in PREPOSITIONS:
        shared -= 1
    if shared < 2:
        return parts
    # the plainest object first: "both Leon Trotsky and the person who ... and ...", never "both the
    # person who ... and Leon Trotsky", where the last "and" seems to join the inner clause
    objects = sorted(
        (" ".join(words[shared:]) for words in split), key=lambda text: (" and " in text, len(text.split()))
    )
    both = f"both {objects[0]} and {objects[1]}" if len(objects) == 2 else join_and(objects)
    return [" ".join(split[0][:shared]) + " " + both]

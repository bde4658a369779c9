"""A grammar lint for generated questions: named patterns that mark text no careful person writes.

It measures phrasing (the quality report counts items with any finding); it does not drop items.
Entity names are masked first (to "X"), so a name's own words never count. The patterns, each
tested on the text that motivated it:

- article_before_article: an article, one to three words, another article, with no verb or
  preposition between: "belongs to the genre a topic", "has the risk factor an ethnic group".
- article_before_preposition: "has the in language".
- generic_noun: a placeholder noun where a type should be: "Which entity ...", "a topic that".
- relation_id: a relation's id showing through: quotes, slashes or underscores, "is the target of".
- bare_participle: a participle that needs "was" or "by" directly before an article: "Which entity
  written an entity".
- repeated_noun: a noun said again as the head of the next description: "Which time zone is a time
  zone of", "a genre that is a genre of", "the country that is the country of citizenship of".
- stacked_clauses: three or more relative clauses in one sentence ("that ... that ... that"), the
  shape of the old template questions ("a film that is about a sport that is played by a team that
  ..."); questions told as sentences are linted sentence by sentence.
- doubled_punctuation: two full stops where a name's own meets the sentence's ("D.C.."), a mark after
  a comma or a question mark, or a space before a mark ("Moulin Rouge!?" is a title's own mark).
- noun_said_twice: a type noun said before a name that ends in it: "in the language Hebrew Language",
  "the county Orange County" (linted on the text with its names, since the name is the repetition).
"""

import re
from collections.abc import Iterable

ARTICLES = frozenset({"a", "an", "the"})
FUNCTION_WORDS = frozenset(
    "a an the of in on at by for to from with into about as and or that who which what whose where when "
    "is are was were be been has have had did does do also not no its his her their this these those "
    "than then one x".split()
)
_VERB_HINTS = re.compile(r"(?:ed|es|s|en|ing)$")
_IRREGULAR_PARTICIPLES = frozenset(
    "written spoken given taken shown drawn sung begun known chosen driven eaten fallen forgotten hidden "
    "ridden risen seen stolen sworn thrown worn broken frozen".split()
)
_IRREGULAR_PAST = frozenset(
    "wrote made won led took gave sang spoke drew began became grew knew saw ran told held built sold met left found "
    "fought taught brought bought thought stood understood heard kept lost paid said sent spent struck swam "
    "shot cut set put hit read".split()
)
"""Past tenses that end in no -ed: a verb between two articles ("a person wrote the story") is English."""
_REPEATED_NOUN = re.compile(
    r"\b([a-z]{3,})(?: (?:that|who|which))?(?: (?:is|was|are|were))?(?: also)? (?:a|an|the)(?: [a-z]+)? \1\b",
    re.IGNORECASE,
)
_RELATIVES = re.compile(r"\b(?:that|who|whom|which)\b", re.IGNORECASE)

PATTERNS = (
    "article_before_article",
    "article_before_preposition",
    "generic_noun",
    "relation_id",
    "bare_participle",
    "repeated_noun",
    "stacked_clauses",
    "doubled_punctuation",
    "noun_said_twice",
)
_DOUBLED_PUNCTUATION = re.compile(r"(?<!\.)\.\.(?!\.)|[,;:][.,;:!?]|\?[.,;:!?]|\s[.,;:!?]")
"""A name's own mark before the sentence's ("Washington, D.C.?", "Moulin Rouge!?") is English; two
full stops, or a mark after a question mark, are not."""
_NOUN_BEFORE_NAME = re.compile(r"\b(?:[Tt]he|[Aa]n?) ([a-z]{3,}) ((?:[A-Z][\w'.-]*)(?: [A-Z][\w'.-]*){0,3})")


def mask_names(text: str, names: Iterable[str]) -> str:
    """Each name replaced by "X", longest first, so its words are not linted."""
    for name in sorted({name for name in names if name}, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(name)}(?!\w)", "X", text)
    return text


def lint(question: str, names: Iterable[str] = ()) -> list[str]:
    """The names of the patterns `question` matches (empty: clean)."""
    text = mask_names(question, names)
    words = re.findall(r"[A-Za-z'-]+", text.lower())
    found = []
    if any(  # sentence by sentence: "the genre X. A person ..." is two sentences, not "the genre a person"
        _article_before_article(re.findall(r"[A-Za-z'-]+", sentence.lower()))
        for sentence in re.split(r"[.?!](?:\s|$)", text)
    ):
        found.append("article_before_article")
    if re.search(r"\b(?:the|a|an) (?:in|of|on|at|by|for|to|from|with)\b", text, re.IGNORECASE):
        found.append("article_before_preposition")
    if re.search(
        r"\b(?:a|an|the|which|what|some) (?:entity|entities|topic|thing|node|item|object)\b", text, re.IGNORECASE
    ):
        found.append("generic_noun")
    if re.search(r"['\"/_]\w|is the target of", text.replace("'s ", " ").replace("s' ", " ")):
        found.append("relation_id")
    if any(
        word in _IRREGULAR_PARTICIPLES
        and following in ARTICLES
        and previous not in ("was", "were", "is", "are", "been", "be", "has", "have", "had")
        for previous, word, following in zip(words, words[1:], words[2:])
    ):
        found.append("bare_participle")
    if any(not match.group(1).endswith("ed") for match in _REPEATED_NOUN.finditer(text)):  # a noun, not "produced"
        found.append("repeated_noun")
    if stacked_clauses(text):
        found.append("stacked_clauses")
    if _DOUBLED_PUNCTUATION.search(question):
        found.append("doubled_punctuation")
    if any(
        match.group(1) in [word.lower().strip(".,;:?!") for word in match.group(2).split()[1:]]
        for match in _NOUN_BEFORE_NAME.finditer(question)
    ):
        found.append("noun_said_twice")
    return found


def stacked_clauses(text: str) -> bool:
    """Whether a sentence of `text` stacks three or more relative clauses."""
    return any(len(_RELATIVES.findall(sentence)) >= 3 for sentence in _sentences(text))


def _sentences(text: str) -> list[str]:
    """The text's sentences, each without its first word (a question's opening "Which" is no clause)."""
    return [sentence.strip().split(" ", 1)[-1] for sentence in re.split(r"[.?!](?:\s|$)", text) if sentence.strip()]


def _article_before_article(words: list[str]) -> bool:
    for index, word in enumerate(words):
        if word not in ARTICLES:
            continue
        for gap in range(1, 4):
            if index + gap + 1 >= len(words):
                break
            between = words[index + 1 : index + gap + 1]
            if any(
                w in FUNCTION_WORDS
                or w in _IRREGULAR_PAST
                or (_VERB_HINTS.search(w) and w not in ("series", "species"))
                for w in between[:-1]
            ):
                break
            last = between[-1]
            if last in FUNCTION_WORDS or last in _IRREGULAR_PAST or last.endswith(("ing", "ed")):
                break
            if gap > 1 and _VERB_HINTS.search(last) and last not in ("series", "species"):
                break  # "a place contains the country": a verb between the two
            if words[index + gap + 1] in ARTICLES:
                return True
    return False

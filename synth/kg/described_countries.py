"""A work's or a person's country as its own description gives it.

Freebase lists every country that put money into a film ("2 Fast 2 Furious was made in Germany",
"Shine was made in New Zealand") and, as citizenships, countries people were born in or descend
from ("Talia Shire is a citizen of Italy", "Christopher Reeve of France", "Dev Patel of India").
The Wikipedia lead says "a 1996 Australian film", "an American actress", and a reader trusts the
lead: audits denied exactly these facts. So:
- a work's country fact is dropped where its lead names one or more nationalities and none of them
  is that country;
- a person's country fact is dropped where the lead names nationalities, none is that country, and
  another of the person's country facts *is* one of them. A person whose every listed country
  disagrees with the lead keeps them (the lead may be the one that is short: "a Soviet-born
  violinist"), and one whose lead names both keeps both (Wyclef Jean, "Haitian-American").

Which word names which country is read from the graph itself, not a hand-written table: the
capitalized words right after the lead's article ("is a 1996 *Australian* biographical drama")
of every work and person that has a country fact, counted against those countries. A word
names a country when enough of its holders have it ("American": United States of America;
"British": United Kingdom, England). A lead with a nationality-looking word the graph never
learned ("a Brazilian-American film" where "Brazilian" is too rare) gives no verdict, and a country
that contains or lies in a named one agrees with it ("a British film" made in Scotland).
"""

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph
from synth.kg.relation_profile import CONTAINMENT_WORDS
from synth.kg.types import PERSON_KINDS, EntityTypes

WORK_NOUNS = frozenset({"film", "television program", "tv program", "album", "book", "novel", "video game"})
"""Works whose lead opens with their nationality ("a 1996 Australian film")."""

_LEAD_SLOT = re.compile(r"\b(?:is|was|are|were)\s+(?:an?|the)\s+((?:[\w'-]+\s+){0,5})")
_CAPITALIZED = re.compile(r"[A-Z][a-z]+")
_NATIONALITY_SHAPE = re.compile(r".+(?:an|ese|ish|ch|i|ic|ss|ek)$")
"""How nationality words end (American, Chinese, British, French, Israeli, Icelandic, Swiss, Greek)."""


@dataclass(frozen=True)
class DemonymRule:
    """How strongly a lead word must go with a country before it names it."""

    min_holders: int = 3
    """A word is learned from at least this many holders of one country."""
    min_share: float = 0.2
    """... who are at least this share of the word's holders."""
    min_top_share: float = 0.5
    """A word names countries only when its commonest country holds this share of its holders."""


def lead_words(description: str, own_name: str) -> set[str]:
    """Capitalized words right after the lead's article, split at hyphens, the entity's own name left out."""
    found = _LEAD_SLOT.search(description.split("\n")[0])
    if found is None:
        return set()
    own = set(re.findall(r"\w+", own_name))
    words = set()
    for token in found.group(1).split()[:5]:
        if token.lower().endswith(("-language", "-born")):  # a language, a birthplace: not a nationality
            continue
        words.update(part for part in token.split("-") if _CAPITALIZED.fullmatch(part) and part not in own)
    return words


class Demonyms:
    """Lead words and the countries they name, learned from one graph's country facts."""

    def __init__(self, kg: KnowledgeGraph, types: EntityTypes, rule: DemonymRule = DemonymRule()):
        self.kg, self.types = kg, types
        heads, relations, tails = kg.edges()
        holders: dict[int, set[int]] = defaultdict(set)
        for number in self.country_relations(person_too=True):
            for head, tail in zip(heads[relations == number], tails[relations == number], strict=True):
                holders[int(head)].add(int(tail))
        self._words = {head: self.words_of(head) for head in holders}
        per_word: Counter = Counter()
        per_pair: Counter = Counter()
        for head, countries in holders.items():
            for word in self._words[head]:
                per_word[word] += 1
                per_pair.update((word, country) for country in countries)
        names: dict[str, set[int]] = defaultdict(set)
        for (word, country), count in per_pair.items():
            if count >= rule.min_holders and count >= rule.min_share * per_word[word]:
                names[word].add(country)
        self.countries = {
            word: frozenset(countries)
            for word, countries in names.items()
            if max(per_pair[word, country] for country in countries) >= rule.min_top_share * per_word[word]
        }
        """Each lead word that names countries, and the node numbers of the countries it names."""

    def country_relations(self, person_too: bool = False) -> list[int]:
        """Relations from a work (and, with `person_too`, a person: citizenship) to a country."""
        kinds = WORK_NOUNS | (PERSON_KINDS if person_too else frozenset())
        return [
            number
            for number, relation_id in enumerate(self.kg.relation_ids)
            if (relation := self.kg.relations.get(relation_id)) is not None
            and not relation.literal
            and relation.tail_type == "country"
            and relation.head_type in kinds
        ]

    def words_of(self, node: int) -> set[str]:
        entity_id = self.kg.node_ids[node]
        entity = self.kg.entities.get(entity_id) if entity_id in self.kg.entities else None
        if entity is None or not entity.description:
            return set()
        return lead_words(entity.description, entity.name)

    def stated(self, node: int) -> frozenset[int] | None:
        """The countries `node`'s lead names, or None where it names none or a nationality the graph never learned."""
        words = self._words.get(node)
        if words is None:
            words = self.words_of(node)
        if any(word not in self.countries and _NATIONALITY_SHAPE.fullmatch(word) for word in words):
            return None
        named = [self.countries[word] for word in words if word in self.countries]
        return frozenset().union(*named) if named else None


def contradicted_countries(kg: KnowledgeGraph, types: EntityTypes) -> np.ndarray:
    """A mask over `kg`'s edges in out-index order (as `KnowledgeGraph.without_edges` takes): works'
    country facts their lead does not give, and people's where the lead gives another of theirs."""
    heads, relations, tails = kg.edges()
    wrong = np.zeros(len(heads), dtype=bool)
    demonyms = Demonyms(kg, types)
    around: dict[frozenset[int], set[int]] = {}

    def given(head: int) -> set[int] | None:
        stated = demonyms.stated(head)
        if stated is None:
            return None
        if stated not in around:
            around[stated] = _with_containment(kg, stated)
        return around[stated]

    works = set(demonyms.country_relations())
    facts: dict[int, list[int]] = {}
    for number in demonyms.country_relations(person_too=True):
        for edge in np.flatnonzero(relations == number):
            facts.setdefault(int(heads[edge]), []).append(int(edge))
    for head, edges in facts.items():
        countries = given(head)
        if countries is None:
            continue
        disagree = [edge for edge in edges if int(tails[edge]) not in countries]
        person_keeps_one = len(disagree) < len(edges)
        for edge in disagree:
            wrong[edge] = int(relations[edge]) in works or person_keeps_one
    return wrong


def _with_containment(kg: KnowledgeGraph, countries: frozenset[int]) -> set[int]:
    """`countries`, and what one containment step away contains them or lies in them."""
    reached = set(countries)
    nodes = np.fromiter(countries, dtype=np.int64)
    for relation_id, relation in kg.relations.items():
        if relation_id in kg.relation_index and CONTAINMENT_WORDS.search(relation.forward.lower()):
            for direction in (FORWARD, INVERSE):
                reached.update(kg.step_nodes(nodes, relation_id, direction).tolist())
    return reached

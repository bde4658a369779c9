"""One noun per entity, decided from all of its relations (and its description), not from one edge.

A relation side's type ("person" for the head of place_of_birth) is one vote for every entity on
that side; each (relation, side) counts once, so a genre listed under 2,000 films does not outvote
itself. A type noun that the entity's description names in its lead ("... is a country in East
Asia") gets an extra vote. The winner must hold at least `min_share` of the votes; otherwise the
entity's type is uncertain and callers use a safe word ("something", or a question without a noun)
instead of a wrong one: South Korea is a country (many country votes) although Freebase also lists
it as a Netflix genre.
"""

import re
from collections import Counter
from functools import lru_cache

from synth.kg.graph import FORWARD, KnowledgeGraph

PERSON = "person"
BROADER = {
    noun: "place" for noun in ("country", "city", "town", "county", "state", "state or province", "continent", "region")
}
"""A set of countries and cities is described as places (plain English, not one graph's schema)."""
SET_AGREEMENT = 0.75
"""Share of a set's entities that must have its noun (the rest: uncertain nouns, never another noun)."""
DESCRIPTION_VOTE = 1.5
_LEAD_WORDS = 14


class EntityTypes:
    def __init__(self, kg: KnowledgeGraph, min_share: float = 0.6):
        self.kg = kg
        self.min_share = min_share
        self.noun = lru_cache(maxsize=200_000)(self._noun)

    def votes(self, entity_id: str) -> Counter:
        votes: Counter = Counter()
        for relation_id, direction in self.kg.incident(entity_id):
            relation = self.kg.relations.get(relation_id)
            if relation is None:
                continue
            noun = relation.head_type if direction == FORWARD else relation.tail_type
            if noun:
                votes[noun] += 1
        entity = self.kg.entities.get(entity_id)
        if entity is not None and entity.description and votes:
            lead = " ".join(entity.description.lower().split()[:_LEAD_WORDS])
            for noun in list(votes):
                if re.search(rf"\b(?:is|was|are|were) (?:an?|the)\b[^.]*?\b{re.escape(noun.lower())}", lead):
                    votes[noun] += DESCRIPTION_VOTE
        return votes

    def _noun(self, entity_id: str) -> str | None:
        """The entity's noun, or None when its relations disagree too much to say."""
        votes = self.votes(entity_id)
        if not votes:
            return None
        (best, count), *rest = votes.most_common(2) + [(None, 0)]
        if rest[0][1] == count or count / sum(votes.values()) < self.min_share:
            return None
        return best

    def common_noun(self, entity_ids: list[str]) -> str | None:
        """The noun `entity_ids` share, or None (a description of a set stays safe): one noun (or
        its broader one, "place" for countries and cities) held by most of them and contradicted
        by none."""
        nouns = [self.noun(entity_id) for entity_id in entity_ids]
        known = {noun for noun in nouns if noun is not None}
        if len(known) > 1:
            known = {BROADER.get(noun, noun) for noun in known}
        if len(known) != 1 or sum(noun is not None for noun in nouns) < SET_AGREEMENT * len(nouns):
            return None
        return known.pop()

    def is_person(self, noun: str | None) -> bool:
        return noun == PERSON

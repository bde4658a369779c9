"""One noun per entity, decided from all of its relations (and its description), not from one edge.

A relation side's type ("person" for the head of place_of_birth) is one vote for every entity on
that side; each (relation, side) counts once, so a genre listed under 2,000 films does not outvote
itself. A type noun that the entity's description names in its lead ("... is a country in East
Asia") gets an extra vote. The winner must hold at least `min_share` of the votes; otherwise the
entity's type is uncertain and callers use a safe word ("something", or a question without a noun)
instead of a wrong one: South Korea is a country (many country votes) although Freebase also lists
it as a Netflix genre. Kinds of person (musical artist, actor, ...) vote together: someone who is a
person on four relations and a musical artist on three is a person, asked about with "Who".

A graph with no type data at all (a MetaQA-style movie KB) gets its votes from the relations
themselves: the objects of an agentive relation (`directed_by`, `written_by`) are people, the
subjects of one are works, and a relation's role noun names its objects (`has_genre`: a genre,
`starred_actors`: an actor, so a person). Where names are ids, one node may stand for two things
("Broken Arrow" the film and the genre): such a node has two kinds of votes and is `conflicted`,
and questions keep away from it. Two things of one kind under one name (two films called "Broken
Arrow", 1950 and 1996) show differently: the node holds two values of a relation that nearly every
other entity holds once (two release years); it is `conflicted` too.
"""

import re
from collections import Counter
from functools import cached_property, lru_cache

import numpy as np

from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph

PERSON = "person"
PERSON_KINDS = frozenset(
    {
        "person",
        "actor",
        "actress",
        "artist",
        "musical artist",
        "musician",
        "singer",
        "composer",
        "director",
        "film director",
        "writer",
        "author",
        "screenwriter",
        "poet",
        "novelist",
        "producer",
        "editor",
        "cinematographer",
        "designer",
        "politician",
        "scientist",
        "athlete",
        "player",
        "founder",
        "creator",
        "spouse",
        "celebrity",
        "comedian",
        "presenter",
    }
)
"""Nouns for kinds of person: they vote together, and a question about one opens with "Who"."""
WORK = "work"
"""What an untyped graph's agentive relations are about (the subject of `directed_by`)."""
BROADER = {
    noun: "place" for noun in ("country", "city", "town", "county", "state", "state or province", "continent", "region")
}
"""A set of countries and cities is described as places (plain English, not one graph's schema)."""
SET_AGREEMENT = 0.75
"""Share of a set's entities that must have its noun (the rest: uncertain nouns, never another noun)."""
FUNCTIONAL_SHARE = 0.97
"""A relation (in one direction) is functional when at least this share of its holders has one value."""
FUNCTIONAL_HOLDERS = 20
"""... and at least this many entities hold it (fewer say nothing)."""
HELD_SAMPLE = 200
"""Entities on a relation's side `held_noun` reads (their nouns agree or they do not)."""
DESCRIPTION_VOTE = 1.5
_LEAD_WORDS = 14


class EntityTypes:
    def __init__(self, kg: KnowledgeGraph, min_share: float = 0.6):
        self.kg = kg
        self.min_share = min_share
        self.noun = lru_cache(maxsize=200_000)(self._noun)
        self.conflicted = lru_cache(maxsize=200_000)(self._conflicted)
        self.held_noun = lru_cache(maxsize=4_096)(self._held_noun)
        self.typed = any(relation.head_type or relation.tail_type for relation in kg.relations.values())
        """Whether the graph says what its relations' sides are; if not, the relations' words say it."""

    def side_noun(self, relation_id: str, direction: str) -> str:
        """The noun of the side of `relation_id` an entity is on when the relation leaves it in
        `direction` (forward: the entity is the head): declared, or read from the relation."""
        relation = self.kg.relations.get(relation_id)
        if relation is None or relation.literal:
            return ""
        declared = relation.head_type if direction == FORWARD else relation.tail_type
        if declared or self.typed:
            return declared
        agentive = relation.forward.endswith(" by")  # "was directed by": people do it to works
        role = relation.head_role if direction == FORWARD else relation.tail_role
        if role:
            noun = re.split(r" (?:of|for|in|to)\b", role)[0].strip()
            return PERSON if noun.split()[-1] in PERSON_KINDS else noun
        if agentive:
            return WORK if direction == FORWARD else PERSON
        return ""

    def _held_noun(self, relation_id: str, direction: str) -> str:
        """Where a relation declares no noun for a side (FB15k-237's "has the capital" of an
        administrative area), the broad noun the graph's entities on that side share ("place": states,
        provinces and a few countries), read from up to HELD_SAMPLE of them; else ""."""
        number = self.kg.relation_index.get(relation_id)
        if number is None or self.side_noun(relation_id, direction):
            return ""
        index = self.kg.out_index if direction == FORWARD else self.kg.in_index
        holders = [
            self.kg.node_ids[node]
            for node in np.unique(np.searchsorted(index.run_ptr, np.flatnonzero(index.run_rel == number), "right") - 1)
        ]
        noun = self.common_noun(holders[:HELD_SAMPLE]) if holders else None
        return BROADER.get(noun, noun) if noun else ""

    def votes(self, entity_id: str) -> Counter:
        votes: Counter[str] = Counter()
        for relation_id, direction in self.kg.incident(entity_id):
            noun = self.side_noun(relation_id, direction)
            if noun:
                votes[noun] += 1
        entity = self.kg.entities.get(entity_id)
        if entity is not None and entity.description and votes:
            lead = " ".join(entity.description.lower().split()[:_LEAD_WORDS])
            for noun in list(votes):
                if re.search(rf"\b(?:is|was|are|were) (?:an?|the)\b[^.]*?\b{re.escape(noun.lower())}", lead):
                    votes[noun] += DESCRIPTION_VOTE  # pyright: ignore[reportArgumentType]  (a float vote)
        return votes

    def _noun(self, entity_id: str) -> str | None:
        """The entity's noun, or None when its relations disagree too much to say."""
        votes = self.votes(entity_id)
        if not votes:
            return None
        people = sum(count for noun, count in votes.items() if noun in PERSON_KINDS)
        if people and people / sum(votes.values()) >= self.min_share:  # kinds of person agree on a person
            return max((noun for noun in votes if noun in PERSON_KINDS), key=lambda noun: (votes[noun], noun == PERSON))
        (best, count), *rest = votes.most_common(2) + [(None, 0)]
        if rest[0][1] == count or count / sum(votes.values()) < self.min_share:
            return None
        return self._most_specific(best, votes)

    @staticmethod
    def _most_specific(best: str, votes: Counter) -> str:
        """A narrower noun the entity is also voted, where the winner is a broad one: Ohio is a "state
        or province" (one vote) more than a "place" (six), and a question asks "Which state"."""
        narrower = [noun for noun in votes if BROADER.get(noun) == best and noun != best]
        return max(narrower, key=lambda noun: (votes[noun], noun)) if narrower else best

    def _conflicted(self, entity_id: str) -> bool:
        """Whether a node named by its id stands for two things that share a name, merged into one
        node by the graph's ids: voted two kinds of thing (a film and a genre), or holding two values
        of a functional relation (two release years: two films of one title)."""
        entity = self.kg.entities.get(entity_id)
        if entity is not None and (entity.name != entity_id or entity.description):
            return False
        kinds = {PERSON if noun in PERSON_KINDS else BROADER.get(noun, noun) for noun in self.votes(entity_id)}
        return len(kinds) > 1 or self.doubled(entity_id)

    def doubled(self, entity_id: str) -> bool:
        """Whether the entity holds two or more values of a relation nearly every holder has once."""
        node = self.kg.node_index.get(entity_id)
        if node is None:
            return False
        for direction in (FORWARD, INVERSE):
            index = self.kg.index(direction)
            relations, first = index.runs(node)
            for offset, relation in enumerate(relations):
                run = first + offset
                if (relation, direction) in self._functional and index.run_start[run + 1] - index.run_start[run] > 1:
                    return True
        return False

    @cached_property
    def _functional(self) -> set[tuple[int, str]]:
        """(relation number, direction) of the functional relations (FUNCTIONAL_SHARE)."""
        found = set()
        for direction in (FORWARD, INVERSE):
            index = self.kg.index(direction)
            values = np.diff(index.run_start)
            for relation in np.unique(index.run_rel).tolist():
                counts = values[index.run_rel == relation]
                if len(counts) >= FUNCTIONAL_HOLDERS and (counts == 1).mean() >= FUNCTIONAL_SHARE:
                    found.add((relation, direction))
        return found

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
        return noun in PERSON_KINDS


KIND_CHECKED = 100
"""Candidates whose kinds `AnswerKind.narrow` looks up; more could not come down to a shortcut's few."""


class AnswerKind:
    """The kind of thing a question says its answer is ("Identify the sport"): a reader counts only
    candidates of that kind, so a clue whose graph set holds one sport among other subjects ("a
    subject of Bend It Like Beckham": Football, Lesbian) gives a sport question away."""

    def __init__(self, types: EntityTypes, answer: str):
        self.types = types
        self.noun = types.noun(answer)

    def may_be(self, entity_id: str) -> bool:
        """Whether the entity is of the answer's kind as far as the graph says (one of no known kind,
        "Lesbian" as a film subject, is not: a reader asked for a sport does not count it)."""
        noun = self.types.noun(entity_id)
        if self.noun is None or noun == self.noun:
            return True
        if noun is None:
            return False
        if self.noun in PERSON_KINDS and noun in PERSON_KINDS:
            return True
        return BROADER.get(noun, noun) == BROADER.get(self.noun, self.noun)

    def of_kind(self, nodes: np.ndarray) -> np.ndarray:
        """The node numbers among `nodes` that may be of the answer's kind."""
        if self.noun is None:
            return nodes
        ids = self.types.kg.node_ids
        return nodes[[self.may_be(ids[node]) for node in nodes.tolist()]] if len(nodes) else nodes

    def narrow(self, nodes: np.ndarray) -> tuple[np.ndarray, float]:
        """(the candidates among `nodes` of the answer's kind, their share of `nodes`), for at most
        KIND_CHECKED candidates; more are left as they are (share 1)."""
        if not 0 < len(nodes) <= KIND_CHECKED:
            return nodes, 1.0
        typed = self.of_kind(nodes)
        return typed, len(typed) / len(nodes)

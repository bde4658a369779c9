"""People whose name others share in the world though not in the graph: the graph holds one "Roy
Thomas", a reader knows the comics writer and two baseball players, so "a film Roy Thomas wrote"
does not say who is meant. The world's namesakes of a person are estimated from how common each
part of the name is among the graph's people, `scale` times over (the world's size against the
graph's): "John Williams" is common twice over, "Judd Apatow" not at all. A person expected to have
a namesake is shown with what they do ("Roy Thomas (writer)"): the profession their description
puts first, else the role the graph gives them most often; one with neither is not named at all.
"""

from collections import Counter
from functools import cached_property, lru_cache

from synth.kg.graph import FORWARD
from synth.kg.types import EntityTypes

NAMESAKES_SHOWN = 1.0
"""Expected namesakes in the world from which a person is shown with their profession."""
MIN_PEOPLE = 500
"""People a graph needs before the commonness of a name means anything (a small test graph of "Person
1", "Person 2" says nothing of the world)."""
PROFESSION = "profession"
"""The tail type of the relation that gives a person's professions."""


class Namesakes:
    def __init__(self, types: EntityTypes, scale: float):
        self.types, self.kg, self.scale = types, types.kg, scale
        self.role = lru_cache(maxsize=200_000)(self._role)  # asked for every clause and every cue's entity
        self.unnameable = lru_cache(maxsize=200_000)(self._unnameable)

    @cached_property
    def _parts(self) -> tuple[Counter, Counter, Counter, int]:
        """(first names, middle names, last names) among the graph's people, and how many people."""
        first, middle, last, people = Counter(), Counter(), Counter(), 0
        for entity_id in self.kg.entities:
            if not self.types.is_person(self.types.noun(entity_id)):
                continue
            people += 1
            words = self.kg.name(entity_id).split()
            if len(words) >= 2:
                first[words[0]] += 1
                last[words[-1]] += 1
                middle.update(words[1:-1])
        return first, middle, last, people

    def expected(self, entity_id: str) -> float:
        """How many other people of this name the world is expected to hold (0 for a one-word name,
        which a reader takes for the famous one: "Madonna")."""
        words = self.kg.name(entity_id).split()
        if len(words) < 2:
            return 0.0
        first, middle, last, people = self._parts
        if people < MIN_PEOPLE:
            return 0.0
        shares = [first[words[0]], *(middle[word] for word in words[1:-1]), last[words[-1]]]
        found = self.scale * people
        for count in shares:
            found *= count / max(1, people)
        return found

    def _role(self, entity_id: str) -> str | None:
        """What to show a person with, where the world holds namesakes: the profession their
        description names first, else the role the graph gives them most often (the art director of
        eleven films); None where none is needed or none is known. (A profession the description does
        not name reads oddly: the producer Bruce Cohen is also listed as a businessperson.)"""
        if not self.has_namesakes(entity_id):
            return None
        entity = self.kg.entities.get(entity_id)
        lead = (entity.description or "").lower() if entity is not None else ""
        named = [
            (position, name.lower())
            for relation in self.profession_relations
            for other in self.kg.neighbors(entity_id, relation, FORWARD)
            if (position := lead.find((name := self.kg.name(other)).lower())) >= 0
        ]
        if named:
            return min(named)[1]
        roles: Counter[str] = Counter()
        for relation_id, direction in self.kg.incident(entity_id):
            relation = self.kg.relations.get(relation_id)
            role = (relation.head_role if direction == FORWARD else relation.tail_role) if relation else ""
            if role:
                roles[role] += len(self.kg.neighbors(entity_id, relation_id, direction))
        return max(roles, key=lambda role: (roles[role], role)) if roles else None

    def _unnameable(self, entity_id: str) -> bool:
        """Whether a question cannot name this person: namesakes expected and no profession to tell them apart."""
        return self.has_namesakes(entity_id) and self.role(entity_id) is None

    def has_namesakes(self, entity_id: str) -> bool:
        """Whether the entity is a person the world is expected to hold others of the same name of."""
        return self.types.is_person(self.types.noun(entity_id)) and self.expected(entity_id) >= NAMESAKES_SHOWN

    @cached_property
    def profession_relations(self) -> list[str]:
        return [relation.id for relation in self.kg.relations.values() if relation.tail_type == PROFESSION]

"""Places inside a better-known place that people are born and die in: Hammersmith in London,
Manhattan and Harlem in New York City, Hollywood in Los Angeles. None is an answer, since a clue that
fits one ("the birthplace of a screenwriter of Superman, located in New York") fits the city a
reader names too. Readers rated 20 such items in rounds 27-34: 7 bad and 9 with a second answer,
against about 15% bad over all obfuscated items (docs/audit.md, round 34).

Read from the graph alone: one containment step up (a relation whose words say containment, in the
direction with fewer values per holder; not "partially contains"), a container that is a place or a
city and that at least PEOPLES_PLACE_MIN people, and more than the part, are born or die in (a
relation from people to places), so a state or a region people are rarely listed in is no city.
"""

import numpy as np

from synth.kg.containment import rising_containment
from synth.kg.graph import FORWARD, KnowledgeGraph
from synth.kg.types import PERSON_KINDS, EntityTypes

PEOPLES_PLACE_MIN = 20
"""People listed as born or dying in a container before a reader takes it for the place to name."""
PLACE_NOUNS = ("place", "city")
"""Nouns of a part and of a container that may be a city (not a country, a state or a county)."""


def city_part_ids(kg: KnowledgeGraph, types: EntityTypes) -> set[str]:
    """The places that lie, one containment step up, in a place more people are born or die in."""
    people = _people_per_place(kg)
    found: set[str] = set()
    for part, container in _one_level_up(kg):
        if people[container] < max(PEOPLES_PLACE_MIN, people[part] + 1):
            continue
        part_id, container_id = kg.node_ids[part], kg.node_ids[container]
        if types.noun(part_id) in PLACE_NOUNS and types.noun(container_id) in PLACE_NOUNS:
            found.add(part_id)
    return found


def _people_per_place(kg: KnowledgeGraph) -> np.ndarray:
    """Per node, how many facts of relations from people to places end there (born in, died in)."""
    heads, relations, tails = kg.edges()
    wanted = [
        number
        for relation_id, number in kg.relation_index.items()
        if (relation := kg.relations.get(relation_id)) is not None
        and relation.head_type in PERSON_KINDS
        and relation.tail_type in PLACE_NOUNS
    ]
    return np.bincount(tails[np.isin(relations, wanted)], minlength=kg.num_nodes)


def _one_level_up(kg: KnowledgeGraph) -> set[tuple[int, int]]:
    """(part, container) pairs one containment step apart, over every relation whose words say so."""
    heads, relations, tails = kg.edges()
    pairs: set[tuple[int, int]] = set()
    for relation_id, rising in rising_containment(kg):
        if "partially" in kg.relations[relation_id].forward.lower():
            continue
        mask = relations == kg.relation_index[relation_id]
        parts, containers = (heads[mask], tails[mask]) if rising == FORWARD else (tails[mask], heads[mask])
        pairs.update(zip(parts.tolist(), containers.tolist()))
    return pairs

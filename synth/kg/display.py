"""A name as a question shows it. A title names several works in the world though one in the graph
("Legend", "The Phantom of the Opera"), so a film is shown with the year its description gives:
"Legend (1985)". A reader then knows which work is meant; the graph's name stays the answer."""

import re
from functools import lru_cache

from synth.kg.multiplicity import default_scale
from synth.kg.namesakes import Namesakes
from synth.kg.types import EntityTypes

DATED_NOUNS = frozenset({"film"})
"""Type nouns whose entities are shown with their year."""
_YEAR = re.compile(r"\b(?:is|was) an? (1[89]\d\d|20\d\d)\b[^.]*?\bfilm\b")
"""'... is a 1985 British-American fantasy adventure film ...': the year of the first sentence."""


def shown_name(types: EntityTypes, entity_id: str) -> str:
    """The entity's name, with its year where it is a dated work and its description says the year,
    or with the profession that tells a person from their namesakes in the world (synth.kg.namesakes)."""
    name = types.kg.name(entity_id)
    year = work_year(types, entity_id)
    if year and year not in name:
        return f"{name} ({year})"
    role = namesakes_of(types).role(entity_id)
    return f"{name} ({role})" if role else name


@lru_cache(maxsize=8)
def namesakes_of(types: EntityTypes) -> Namesakes:
    """One estimate of namesakes per graph's types (what a verbalizer and a generator share)."""
    return Namesakes(types, default_scale(types.kg))


def work_year(types: EntityTypes, entity_id: str) -> str | None:
    """The year a dated work's description opens with, or None."""
    entity = types.kg.entities.get(entity_id)
    if entity is None or not entity.description or types.noun(entity_id) not in DATED_NOUNS:
        return None
    found = _YEAR.search(entity.description.split(". ")[0])
    return found.group(1) if found else None

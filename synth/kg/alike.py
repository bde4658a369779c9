"""Relations a reader cannot tell apart: their phrases differ only in tense or auxiliaries ("has the
capital" for an administrative area, "has had the capital" for a country), or one is the other
stated from the far end ("has the campus" / "is a campus of"). A question over one is answered by
the facts of all of them (Australia has the capital Canberra as the Australian Capital Territory
does), so the world estimate reads such steps over the whole group (synth.kg.containment).
"""

import re

from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph

BARE = frozenset("has had have is was were been being served as the a an be".split())
"""Words dropped before comparing phrases: tense and auxiliaries (direction words like "of" stay)."""


def _bare(phrase: str) -> str:
    return " ".join(word for word in re.findall(r"[a-z]+", phrase.lower()) if word not in BARE)


def alike_steps(kg: KnowledgeGraph) -> dict[tuple[str, str], list[tuple[str, str]]]:
    """(relation, direction) -> every (relation, direction) that reads the same, itself first, for
    the steps that have company (the others read only as themselves)."""
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for relation_id, relation in sorted(kg.relations.items()):
        if not relation.forward or not relation.inverse:
            continue
        for direction, there, back in (
            (FORWARD, relation.forward, relation.inverse),
            (INVERSE, relation.inverse, relation.forward),
        ):
            groups.setdefault((_bare(there), _bare(back)), []).append((relation_id, direction))
    found = {}
    for group in groups.values():
        for step in group if len(group) > 1 else []:
            found[step] = [step, *(other for other in group if other != step)]
    return found

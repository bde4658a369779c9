"""Facts a question never states but still counts: a second graph for the words, the first for the answers.

Readers marked items bad for facts they would not have written, although the facts are not false
enough to forget: "The Man with the Golden Gun was made in the Kingdom of Great Britain" (its lead
names no nationality; Freebase lists a defunct state), "The Vow was made in Australia" (a
co-producer), "Mark Knopfler is a citizen of Scotland" (readers say the United Kingdom). Dropping
such facts from the graph makes questions wrong the other way: the uniqueness test over the raw
triples found a question whose answer a dropped citizenship of Hong Kong had made unique. So these
facts leave only the graph that questions are worded from (walks and cues) and stay in the graph
that answers are counted in: a question is then unique counting them, and states only facts a
reader would write. Three classes, each read from the graph itself:
- a work's country fact whose lead names no nationality (a lead that names one already decides:
  synth.kg.described_countries);
- a country fact whose country is a part of another country the graph lists (Scotland, England,
  Wales and Northern Ireland in the United Kingdom; Hong Kong in China; Puerto Rico in the United
  States): containment read upward, in the direction with fewer values per holder, and not both ways;
- a person's place that is a whole country ("born in England", an artist "from" the United States):
  true, but no birthplace a reader would ask about (readers flagged "the capital of Graham King's
  birthplace", England);
- a language of a work or a person that lists several: which one is a scene or a second language
  a reader cannot tell, and readers deny them (Close Encounters "in Hindi", Antwone Fisher "in
  Japanese") or add the other (Jackie Chan speaks English too): 17 of 34 rated items stating one
  were bad in rounds 23-30, 74 of 386 of the rest (docs/audit.md, round 30).
"""

import numpy as np

from synth.kg.containment import rising_containment
from synth.kg.described_countries import Demonyms
from synth.kg.graph import KnowledgeGraph
from synth.kg.types import PERSON_KINDS, EntityTypes


def unstated_facts(kg: KnowledgeGraph, types: EntityTypes) -> np.ndarray:
    """A mask over `kg`'s edges in out-index order (as `KnowledgeGraph.without_edges` takes): the
    country facts questions may count but never state (the module docstring)."""
    heads, relations, tails = kg.edges()
    demonyms = Demonyms(kg, types)
    country_relations = demonyms.country_relations(person_too=True)
    countries = np.isin(relations, country_relations)
    country_nodes = _country_nodes(kg, country_relations)
    parts = country_parts(kg, country_nodes)
    unstated = countries & np.isin(tails, np.fromiter(parts, dtype=np.int64, count=len(parts)))
    for edge in np.flatnonzero(np.isin(relations, demonyms.country_relations()) & ~unstated):
        unstated[edge] = demonyms.stated(int(heads[edge])) is None
    coarse = [
        number
        for number, relation_id in enumerate(kg.relation_ids)
        if (relation := kg.relations.get(relation_id)) is not None
        and relation.head_type in PERSON_KINDS
        and number not in country_relations
    ]
    unstated |= np.isin(relations, coarse) & np.isin(tails, country_nodes)
    return unstated | several_languages(kg)


def several_languages(kg: KnowledgeGraph) -> np.ndarray:
    """A mask over `kg`'s edges of the language facts of holders (works, people) that list two or more
    languages over the relation."""
    heads, relations, _ = kg.edges()
    numbers = [
        kg.relation_index[relation_id]
        for relation_id, relation in kg.relations.items()
        if relation_id in kg.relation_index and relation.tail_type == "language" and relation.head_type != "country"
    ]
    found = np.zeros(len(heads), dtype=bool)
    for number in numbers:
        edges = np.flatnonzero(relations == number)
        listed = np.bincount(heads[edges], minlength=kg.num_nodes)
        found[edges[listed[heads[edges]] >= 2]] = True
    return found


def country_part_ids(kg: KnowledgeGraph, types: EntityTypes) -> set[str]:
    """The countries that lie in another the graph lists (England, Scotland, Hong Kong): never an
    answer, since every place clue that fits one fits its country too (readers added the United
    Kingdom to all 8 rated items answered England, 7 of them bad, rounds 24-31)."""
    countries = _country_nodes(kg, Demonyms(kg, types).country_relations(person_too=True))
    found = {kg.node_ids[node] for node in country_parts(kg, countries)}
    return {part for part in found if types.noun(part) in (None, "country")}  # not London, listed as a country


def _country_nodes(kg: KnowledgeGraph, country_relations) -> np.ndarray:
    """The nodes some country relation reaches (a film's country, a person's citizenship)."""
    _, relations, tails = kg.edges()
    return np.unique(tails[np.isin(relations, country_relations)])


def country_parts(kg: KnowledgeGraph, countries: np.ndarray) -> set[int]:
    """The nodes of `countries` that lie in another of them, one containment step up, and do not also
    contain it (Netherlands and Kingdom of the Netherlands list each other only one way up)."""
    members = set(countries.tolist())
    up: dict[int, set[int]] = {}
    for relation_id, rising in rising_containment(kg):
        for node in members:
            reached = kg.step_nodes(np.array([node], dtype=np.int64), relation_id, rising).tolist()
            up.setdefault(node, set()).update(other for other in reached if other in members and other != node)
    return {node for node, containers in up.items() if any(node not in up.get(other, ()) for other in containers)}

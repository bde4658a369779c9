"""Facts a question counts but never states (synth.kg.unstated): a citizenship of a country that
lies in another (Scotland in the United Kingdom), a work's country its lead gives no verdict on and
a person born in a whole country leave the graph questions are worded from; a country the lead
names, a sovereign country, countries that contain each other both ways and a birthplace that is
a city stay."""

import numpy as np
from named_graph import named_graph
from test_described_countries import RELATIONS as COUNTRY_RELATIONS

from synth.kg.graph import KnowledgeGraph
from synth.kg.types import EntityTypes
from synth.kg.unstated import country_part_ids, country_parts, unstated_facts
from synth.schemas import Entity, Relation, Triple

RELATIONS = {
    **COUNTRY_RELATIONS,
    "born": Relation(id="born", forward="was born in", head_type="person", tail_type="location"),
    "division": Relation(
        id="division",
        forward="is an administrative division of",
        inverse="has the administrative division",
        head_type="country",
        tail_type="country",
    ),
}


def _graph() -> KnowledgeGraph:
    entities = {
        node: Entity(id=node, name=name)
        for node, name in {
            "/uk": "United Kingdom",
            "/sco": "Scotland",
            "/eng": "England",
            "/usa": "United States of America",
            "/nl": "Netherlands",
            "/knl": "Kingdom of the Netherlands",
            "/city": "Glasgow",
        }.items()
    }
    triples = [
        Triple(head="/uk", relation="contains", tail="/sco"),
        Triple(head="/uk", relation="contains", tail="/eng"),
        Triple(head="/uk", relation="contains", tail="/city"),
        Triple(head="/sco", relation="contains", tail="/city"),
        Triple(head="/sco", relation="division", tail="/uk"),
        Triple(head="/nl", relation="contains", tail="/knl"),  # listed both ways: neither is a part
        Triple(head="/knl", relation="contains", tail="/nl"),
    ]
    for number in range(4):  # American films whose leads teach the word
        film = f"/f/{number}"
        entities[film] = Entity(id=film, name=f"Film {number}", description=f"Film {number} is a 2001 American film.")
        triples.append(Triple(head=film, relation="country", tail="/usa"))
    cases = {
        "/told": ("Told", "Told is a 1999 American drama film.", "film", ["/usa"]),
        "/silent": ("Silent", "Silent is a 1974 spy film.", "film", ["/uk", "/usa"]),
        "/knopfler": ("Mark", "Mark is a British guitarist.", "person", ["/sco", "/uk"]),
        "/dutch": ("Piet", "Piet is a Dutch painter.", "person", ["/nl"]),
        "/plain": ("Ann", "Ann is an actress.", "person", ["/usa"]),
    }
    entities["/lamont"] = Entity(id="/lamont", name="Lamont", description="Lamont is an art director.")
    triples += [
        Triple(head="/lamont", relation="born", tail="/uk"),
        Triple(head="/plain", relation="born", tail="/city"),
    ]
    for node, (name, description, kind, countries) in cases.items():
        entities[node] = Entity(id=node, name=name, description=description)
        relation = "country" if kind == "film" else "nationality"
        triples += [Triple(head=node, relation=relation, tail=country) for country in countries]
    return KnowledgeGraph.from_triples(triples, entities, RELATIONS, "unstated")


def _unstated(kg: KnowledgeGraph) -> set[tuple[str, str]]:
    heads, _, tails = kg.edges()
    mask = unstated_facts(kg, EntityTypes(kg))
    return {(kg.node_ids[heads[edge]], kg.node_ids[tails[edge]]) for edge in np.flatnonzero(mask)}


def test_parts_of_countries_and_works_the_lead_is_silent_on_are_unstated():
    unstated = _unstated(_graph())
    assert ("/knopfler", "/sco") in unstated and ("/knopfler", "/uk") not in unstated
    assert ("/silent", "/uk") in unstated and ("/silent", "/usa") in unstated  # the lead names no nationality
    assert ("/told", "/usa") not in unstated  # the lead names it
    assert ("/plain", "/usa") not in unstated  # a person's country with a silent lead is stated
    assert ("/dutch", "/nl") not in unstated  # listed both ways: no part
    assert not {fact for fact in unstated if fact[0].startswith("/f/")}
    assert ("/lamont", "/uk") in unstated and ("/plain", "/city") not in unstated  # born in a whole country
    assert len(unstated) == 4


def test_a_part_is_contained_one_way_only():
    kg = _graph()
    countries = np.array([kg.node_index[node] for node in ("/uk", "/sco", "/eng", "/nl", "/knl", "/usa")])
    assert {kg.node_ids[node] for node in country_parts(kg, countries)} == {"/sco", "/eng"}


def test_a_country_inside_another_is_never_an_answer():
    """Scotland lies in the United Kingdom: a place clue that fits it fits the kingdom too, so it is
    no answer (readers added the United Kingdom to all 8 rated items answered England, rounds 24-31)."""
    kg = _graph()
    assert country_part_ids(kg, EntityTypes(kg)) == {"/sco"}


def test_unstated_facts_leave_the_worded_graph_only():
    kg = _graph()
    stated = kg.without_edges(unstated_facts(kg, EntityTypes(kg)))
    assert not stated.has_edge("/knopfler", "nationality", "/sco")
    assert kg.has_edge("/knopfler", "nationality", "/sco")  # still counted
    assert stated.node_ids == kg.node_ids  # one numbering: answers counted in one are nodes of the other


def test_a_language_of_a_holder_that_lists_several_is_unstated():
    """A film in English and Hindi (one scene), a person speaking two languages: which one a reader
    would name cannot be told, so neither is stated; a film's only language is."""
    relations = {
        "language": Relation(id="language", forward="is in the language", head_type="film", tail_type="language"),
        "speaks": Relation(id="speaks", forward="speaks", head_type="person", tail_type="language"),
    }
    triples = [
        Triple(head="/close-encounters", relation="language", tail="/english"),
        Triple(head="/close-encounters", relation="language", tail="/hindi"),
        Triple(head="/lagaan", relation="language", tail="/hindi"),
        Triple(head="/jackie-chan", relation="speaks", tail="/english"),
        Triple(head="/jackie-chan", relation="speaks", tail="/cantonese"),
    ]
    graph = named_graph(triples, "languages", relations)
    heads, relations_of, tails = graph.edges()
    unstated = {
        (graph.node_ids[heads[edge]], graph.node_ids[tails[edge]])
        for edge in np.flatnonzero(unstated_facts(graph, EntityTypes(graph)))
    }
    assert unstated == {
        ("/close-encounters", "/english"),
        ("/close-encounters", "/hindi"),
        ("/jackie-chan", "/english"),
        ("/jackie-chan", "/cantonese"),
    }

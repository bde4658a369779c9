"""A place inside a better-known city (Hammersmith in London, Manhattan in New York City) never
answers: a reader names the city for a place clue that fits the part (synth.kg.city_parts). A city
inside a state, a part of a city few people are listed in, and a region people are rarely born in
stay answers."""

from named_graph import named_graph

from synth.kg.city_parts import PEOPLES_PLACE_MIN, city_part_ids
from synth.kg.types import EntityTypes
from synth.schemas import Relation, Triple

RELATIONS = {
    "contains": Relation(id="contains", forward="contains", inverse="is located in", head_type="place"),
    "born": Relation(id="born", forward="was born in", head_type="person", tail_type="place"),
    "capital": Relation(id="capital", forward="has the capital", head_type="state or province", tail_type="city"),
}


def _graph():
    triples = [
        Triple(head="/state", relation="contains", tail="/city"),
        Triple(head="/state", relation="capital", tail="/city"),
        Triple(head="/state", relation="contains", tail="/town"),
        Triple(head="/city", relation="contains", tail="/borough"),
        Triple(head="/city", relation="contains", tail="/suburb"),
        Triple(head="/town", relation="contains", tail="/village"),
        Triple(head="/region", relation="contains", tail="/port"),
    ]
    triples += [Triple(head=f"/p/{n}", relation="born", tail="/city") for n in range(PEOPLES_PLACE_MIN)]
    triples += [Triple(head=f"/q/{n}", relation="born", tail="/borough") for n in range(3)]
    triples += [Triple(head=f"/r/{n}", relation="born", tail="/suburb") for n in range(PEOPLES_PLACE_MIN + 1)]
    triples += [Triple(head=f"/s/{n}", relation="born", tail="/town") for n in range(5)]
    triples += [Triple(head=f"/t/{n}", relation="born", tail="/port") for n in range(4)]
    triples += [Triple(head="/u", relation="born", tail="/region")]
    return named_graph(triples, "city-parts", RELATIONS)


def test_only_a_place_inside_a_city_more_people_are_born_in_is_refused():
    kg = _graph()
    types = EntityTypes(kg)
    assert types.noun("/city") == "city"
    # the borough: inside a city twenty people are born in; the suburb has more people than its city;
    # the village's town and the port's region have too few to be the city a reader names
    assert city_part_ids(kg, types) == {"/borough"}

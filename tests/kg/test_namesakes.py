"""A person whose name the world's other people share is shown with the profession their
description puts first, or not named at all when none is known; a rare name, and any name in a graph
too small to say what is common, is shown as it is."""

from synth.generators.templates import TemplateVerbalizer
from synth.kg.display import shown_name
from synth.kg.graph import KnowledgeGraph
from synth.kg.namesakes import Namesakes
from synth.kg.types import EntityTypes
from synth.schemas import Constraint, Entity, Relation, Step, Triple

FIRST = ["John", "Mary", "David", "Anna", "Paul", "Ruth", "Mark", "Lena", "Carl", "Emma"]
LAST = ["Smith", "Jones", "Brown", "Clark", "Lewis", "Hall", "Young", "King", "Wright", "Green"]
RELATIONS = {
    "profession": Relation(
        id="profession",
        forward="has the profession",
        inverse="is the profession of",
        head_type="person",
        tail_type="profession",
    ),
    "born": Relation(
        id="born", forward="was born in", inverse="is the birthplace of", head_type="person", tail_type="city"
    ),
}


def _people_graph(people: int, fillers: int = 0) -> KnowledgeGraph:
    """`people` people named from ten first and ten last names, born in one of five cities; /p/0 is a
    writer and an editor whose description calls them an editor first; /p/1 has no profession;
    /rare is "Zebulon Quasthoff"; `fillers` unrelated places make the graph (and so the world's
    scale against it) larger."""
    triples = [Triple(head=f"/p/{n}", relation="born", tail=f"/city/{n % 5}") for n in range(people)]
    triples += [Triple(head="/p/0", relation="profession", tail=job) for job in ("/job/writer", "/job/editor")]
    triples += [
        Triple(head="/rare", relation="born", tail="/city/0"),
        Triple(head="/rare", relation="profession", tail="/job/writer"),
    ]
    triples += [Triple(head=f"/x/{n}", relation="born", tail=f"/y/{n}") for n in range(fillers)]
    entities = {f"/p/{n}": Entity(id=f"/p/{n}", name=f"{FIRST[n % 10]} {LAST[(n // 10) % 10]}") for n in range(people)}
    entities["/p/0"] = Entity(id="/p/0", name="John Smith", description="John Smith is an American editor and writer.")
    entities["/rare"] = Entity(id="/rare", name="Zebulon Quasthoff")
    entities |= {job: Entity(id=job, name=job[5:].capitalize()) for job in ("/job/writer", "/job/editor")}
    entities |= {f"/city/{n}": Entity(id=f"/city/{n}", name=f"City {n}") for n in range(5)}
    return KnowledgeGraph.from_triples(triples, entities, RELATIONS, "people")


def test_a_common_name_gets_the_profession_its_description_names_first_and_a_rare_one_nothing():
    graph = _people_graph(600)
    namesakes = Namesakes(EntityTypes(graph), scale=76)
    assert namesakes.expected("/p/0") > 1 > namesakes.expected("/rare")
    assert namesakes.role("/p/0") == "editor"  # the description says "editor and writer"
    assert namesakes.role("/rare") is None and not namesakes.unnameable("/rare")
    assert namesakes.role("/p/1") is None and namesakes.unnameable("/p/1")  # "Mary Smith": common, no profession


def test_a_graph_too_small_to_tell_what_is_common_shows_every_name_as_it_is():
    graph = _people_graph(60)
    namesakes = Namesakes(EntityTypes(graph), scale=76)
    assert namesakes.expected("/p/0") == 0 and not namesakes.unnameable("/p/1")


def test_a_question_names_a_common_person_with_the_profession_and_never_a_possessive():
    graph = _people_graph(600, fillers=10_000)  # about 11,000 nodes: the world is about 90 times the graph
    types = EntityTypes(graph)
    assert shown_name(types, "/p/0") == "John Smith (editor)" and shown_name(types, "/rare") == "Zebulon Quasthoff"
    clause = TemplateVerbalizer(graph).clause(Constraint(anchor="/p/0", steps=[Step(relation="born")]))
    assert "John Smith (editor)" in clause and "(editor)'s" not in clause

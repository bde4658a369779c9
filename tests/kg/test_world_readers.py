"""What readers taught the world estimate and the phrasing: relations listed in part (a country's
capitals), a floor that spares hopeless constructions, films named with their year, single facts
that contradict their relation's type, the other candidates a reader adds (co-workers credited in
another role among them), and relations that read alike."""

import random

import pytest

from synth.errors import ConfigError
from synth.generators.kg_walk import RandomWalker, Walk, WalkConfig
from synth.generators.multihop import MultihopGenerator
from synth.generators.reverse import ConstructConfig, ReverseConstructor
from synth.generators.templates import TemplateVerbalizer
from synth.kg.contradictions import contradicting_edges
from synth.kg.display import shown_name
from synth.kg.graph import KnowledgeGraph
from synth.kg.multiplicity import WorldConfig, WorldModel
from synth.kg.relation_profile import read_overrides, wrong_facts
from synth.kg.shortcuts import effective_hops
from synth.kg.types import AnswerKind, EntityTypes
from synth.schemas import Constraint, Entity, Hop, Relation, Step, Triple

COUNTRIES = [f"/c/{number}" for number in range(12)]


def _capitals_graph() -> KnowledgeGraph:
    """Twelve countries with one capital each, and films made in them (a film has one composer)."""
    triples = [Triple(head=country, relation="capital", tail=f"{country}-city") for country in COUNTRIES]
    triples += [Triple(head=f"/f/{n}", relation="music", tail=f"/p/{n % 5}") for n in range(20)]
    entities = {country: Entity(id=country, name=f"Country {country[3:]}") for country in COUNTRIES}
    entities |= {f"{country}-city": Entity(id=f"{country}-city", name=f"City {country[3:]}") for country in COUNTRIES}
    entities |= {f"/f/{n}": Entity(id=f"/f/{n}", name=f"Film {n}") for n in range(20)}
    entities |= {f"/p/{n}": Entity(id=f"/p/{n}", name=f"Composer {n}") for n in range(5)}
    entities["/f/0"] = Entity(
        id="/f/0", name="Legend", description="Legend is a 1985 British-American fantasy adventure film."
    )
    relations = {
        "capital": Relation(
            id="capital",
            forward="has had the capital",
            inverse="has served as the capital of",
            head_type="country",
            tail_type="city",
        ),
        "music": Relation(
            id="music",
            forward="had music by",
            inverse="composed the music for",
            head_type="film",
            tail_type="composer",
        ),
    }
    return KnowledgeGraph.from_triples(triples, entities, relations, "capitals")


def _world(graph: KnowledgeGraph, tmp_path, overrides: str = "") -> WorldModel:
    """The world model with an override file of these lines."""
    path = tmp_path / "relation_overrides.yaml"
    path.write_text(overrides)
    return WorldModel(graph, WorldConfig(relation_overrides=path))


def test_a_relation_listed_in_part_counts_the_values_a_reader_knows(tmp_path):
    graph = _capitals_graph()
    capital_of = Constraint(anchor=COUNTRIES[0], steps=[Step(relation="capital")])
    plain = _world(graph, tmp_path)
    assert plain.bounded("capital", "forward") and plain.answers([capital_of]) == 1
    listed_in_part = _world(graph, tmp_path, "capital: {world_values: 2}\n")
    assert listed_in_part.factor("capital", "forward") == 2 and listed_in_part.answers([capital_of]) == 2
    assert listed_in_part.factor("capital", "inverse") == 1  # a city was the capital of one country


def test_a_holder_listed_in_part_counts_its_values_a_reader_knows_and_no_other_holder_does(tmp_path):
    # France is in one time zone in the graph and in twelve in the world; Poland is in one in both
    graph = _capitals_graph()
    capital_of = [Constraint(anchor=country, steps=[Step(relation="capital")]) for country in COUNTRIES[:2]]
    world = _world(graph, tmp_path, f"capital:\n  world_values_of: {{'{COUNTRIES[0]}': 3}}\n")
    assert world.answers([capital_of[0]]) == 3 and world.answers([capital_of[1]]) == 1
    capital_city_of = Constraint(anchor="/c/0-city", steps=[Step(relation="capital", direction="inverse")])
    assert world.answers([capital_city_of]) == 1  # the other direction: a city was the capital of one country


@pytest.mark.parametrize("values", ["{'/c/0': 0.5}", "{'/c/0': true}", "[3]"])
def test_world_values_of_that_is_not_ids_to_numbers_is_refused_in_one_line(tmp_path, values):
    path = tmp_path / "relation_overrides.yaml"
    path.write_text(f"capital:\n  world_values_of: {values}\n")
    with pytest.raises(ConfigError, match="world_values_of must map head ids to numbers of at least 1"):
        read_overrides(path)


def test_a_walk_no_cue_could_make_unique_is_hopeless_before_construction(tmp_path):
    graph = _capitals_graph()
    world = _world(graph, tmp_path)
    constructor = ReverseConstructor(graph, ConstructConfig(), world=world)
    # composer -> films: many-valued into an open class; the film's only other fact is its composer
    walk = Walk(("/p/1", "/f/1"), (Hop(head="/f/1", relation="music", tail="/p/1", direction="inverse"),))
    assert constructor.world_floor(walk) > world.config.max_answers
    # film -> composer: bounded, one value; the floor allows it
    walk = Walk(("/f/1", "/p/1"), (Hop(head="/f/1", relation="music", tail="/p/1"),))
    assert constructor.world_floor(walk) <= world.config.max_answers


def test_a_named_film_carries_its_year_and_never_a_possessive():
    graph = _capitals_graph()
    verbalizer = TemplateVerbalizer(graph)
    assert shown_name(verbalizer.types, "/f/0") == "Legend (1985)"
    assert shown_name(verbalizer.types, "/f/1") == "Film 1"  # no description, no year
    assert shown_name(verbalizer.types, "/p/0") == "Composer 0"
    clause = verbalizer.clause(Constraint(anchor="/f/0", steps=[Step(relation="music")]))
    assert "Legend (1985)" in clause and "(1985)'s" not in clause


@pytest.mark.parametrize("values", [0.5, "two", True])
def test_world_values_below_one_or_not_a_number_is_refused_in_one_line(tmp_path, values):
    path = tmp_path / "relation_overrides.yaml"
    path.write_text(f"/film/film/music:\n  world_values: {values}\n")
    with pytest.raises(ConfigError, match="world_values must be a number of at least 1"):
        read_overrides(path)


def test_a_fact_that_contradicts_a_coherent_relation_and_a_self_loop_are_dropped():
    """Fifty films 'made in' countries and one 'made in' a city (EastEnders in London): the city fact
    is wrong where the relation is otherwise coherent; an entity related to itself is always wrong."""
    countries = [f"/c/{n}" for n in range(5)]
    triples = [Triple(head=f"/f/{n}", relation="made_in", tail=countries[n % 5]) for n in range(50)]
    triples += [Triple(head=f"/f/{n}", relation="released_in", tail=countries[n % 5]) for n in range(50)]
    triples += [Triple(head="/f/50", relation="made_in", tail="/x/london")]
    triples += [Triple(head="/x/london", relation=relation, tail=countries[0]) for relation in ("capital_of", "in")]
    triples += [Triple(head="/x/london", relation="in", tail=countries[1])]
    triples += [Triple(head=f"/x/city{n}", relation="capital_of", tail=countries[n]) for n in range(1, 5)]
    triples += [Triple(head="/f/1", relation="influenced_by", tail="/f/1")]
    entities = {f"/f/{n}": Entity(id=f"/f/{n}", name=f"Film {n}") for n in range(51)}
    entities |= {country: Entity(id=country, name=f"Country {country[3:]}") for country in countries}
    entities |= {f"/x/city{n}": Entity(id=f"/x/city{n}", name=f"City {n}") for n in range(1, 5)}
    entities["/x/london"] = Entity(id="/x/london", name="London")
    relations = {
        "made_in": Relation(id="made_in", forward="was made in", head_type="film", tail_type="country"),
        "released_in": Relation(id="released_in", forward="was released in", head_type="film", tail_type="country"),
        "capital_of": Relation(id="capital_of", forward="is the capital of", head_type="city", tail_type="country"),
        "in": Relation(id="in", forward="is a city in", head_type="city", tail_type="country"),
        "influenced_by": Relation(id="influenced_by", forward="was influenced by", head_type="film", tail_type="film"),
    }
    graph = KnowledgeGraph.from_triples(triples, entities, relations, "contradictions")
    wrong = contradicting_edges(graph, EntityTypes(graph), max_share=0.02)
    cleaned = graph.without_edges(wrong)
    assert not cleaned.has_edge("/f/50", "made_in", "/x/london") and graph.has_edge("/f/50", "made_in", "/x/london")
    assert not cleaned.has_edge("/f/1", "influenced_by", "/f/1")
    assert cleaned.has_edge("/f/0", "made_in", countries[0]) and cleaned.has_edge(
        "/x/london", "capital_of", countries[0]
    )
    assert int(wrong.sum()) == 2
    # where a relation disagrees with its type often, the type is loose there, not the facts
    assert int(contradicting_edges(graph, EntityTypes(graph), max_share=0.0).sum()) == 1


def test_the_other_candidates_of_the_smallest_clue_are_the_answers_a_reader_adds(tmp_path):
    """Two composers scored Heat; the answer scored one film about a sport (one film in a hundred is),
    the other composer forty films: a reader knows the prolific one has scored some film about a sport
    too."""
    sport_films = [f"/f/sport{n}" for n in range(30)]
    other_films = [f"/f/other{n}" for n in range(3000)]
    triples = [Triple(head=film, relation="about", tail="/s/baseball") for film in sport_films]
    triples += [Triple(head=film, relation="about", tail=f"/s/topic{n % 20}") for n, film in enumerate(other_films)]
    triples += [Triple(head=film, relation="music", tail=f"/p/minor{n % 60}") for n, film in enumerate(other_films)]
    triples += [Triple(head=sport_films[0], relation="music", tail="/p/answer")]
    triples += [Triple(head=film, relation="music", tail=f"/p/minor{n}") for n, film in enumerate(sport_films[1:])]
    triples += [Triple(head="/f/heat", relation="music", tail=composer) for composer in ("/p/answer", "/p/prolific")]
    triples += [Triple(head=film, relation="music", tail="/p/prolific") for film in other_films[:40]]
    names = [*sport_films, *other_films, "/f/heat", "/s/baseball", "/p/answer", "/p/prolific"]
    names += [f"/s/topic{n}" for n in range(20)] + [f"/p/minor{n}" for n in range(60)]
    entities = {name: Entity(id=name, name=name.split("/")[-1]) for name in names}
    relations = {
        "about": Relation(id="about", forward="is about", head_type="film", tail_type="subject"),
        "music": Relation(id="music", forward="had music by", head_type="film", tail_type="composer"),
    }
    graph = KnowledgeGraph.from_triples(triples, entities, relations, "rivals")
    world = _world(graph, tmp_path)
    chain = Constraint(
        anchor="/s/baseball", steps=[Step(relation="about", direction="inverse"), Step(relation="music")]
    )
    cue = Constraint(anchor="/f/heat", steps=[Step(relation="music")])
    prolific = world.rivals([chain, cue], "/p/answer")
    assert prolific > world.config.rival_share
    # the same question where Heat's other composer scored one film: a reader adds no one
    sparse = [t for t in triples if not (t.tail == "/p/prolific" and t.head != "/f/heat")]
    sparse += [Triple(head=other_films[0], relation="music", tail="/p/prolific")]
    graph = KnowledgeGraph.from_triples(sparse, entities, relations, "rivals-sparse")
    assert _world(graph, tmp_path).rivals([chain, cue], "/p/answer") < world.config.rival_share < prolific


def test_an_override_file_lists_single_wrong_facts_and_the_graph_leaves_them_out(tmp_path):
    path = tmp_path / "relation_overrides.yaml"
    path.write_text("capital:\n  wrong_facts:\n    - [/c/1, /c/1-city]\n    - [/c/9, /nowhere]\n")
    graph = _capitals_graph()
    mask = graph.edge_mask(wrong_facts(read_overrides(path)))
    assert int(mask.sum()) == 1  # a fact the graph does not hold marks nothing
    cleaned = graph.without_edges(mask)
    assert not cleaned.has_edge("/c/1", "capital", "/c/1-city") and cleaned.has_edge("/c/2", "capital", "/c/2-city")
    path.write_text("capital:\n  wrong_facts: [/c/1]\n")
    with pytest.raises(ConfigError, match=r"wrong_facts must be a list of \[head id, tail id\]"):
        read_overrides(path)


def _credits_graph(joel_credited_on_ladykillers: bool) -> KnowledgeGraph:
    """Forty films each directed and produced by one person (a director produces his films here), a
    producer G's film edited by the brothers Ethan and Joel, and The Ladykillers, produced by Ethan
    (and by B, a producer who edited nothing), maybe directed by Joel."""
    triples = [Triple(head=f"/f/{n}", relation="directed", tail=f"/p/d{n}") for n in range(40)]
    triples += [Triple(head=f"/f/{n}", relation="produced", tail=f"/p/d{n}") for n in range(40)]
    triples += [Triple(head="/f/g", relation="produced", tail="/p/g")]
    triples += [Triple(head="/f/g", relation="edited", tail=brother) for brother in ("/p/ethan", "/p/joel")]
    triples += [Triple(head="/f/lady", relation="produced", tail=person) for person in ("/p/ethan", "/p/b")]
    if joel_credited_on_ladykillers:
        triples += [Triple(head="/f/lady", relation="directed", tail="/p/joel")]
    names = [f"/f/{n}" for n in range(40)] + [f"/p/d{n}" for n in range(40)]
    names += ["/f/g", "/p/g", "/f/lady", "/p/ethan", "/p/joel", "/p/b"]
    entities = {name: Entity(id=name, name=name.split("/")[-1]) for name in names}
    relations = {
        relation: Relation(id=relation, forward=f"was {relation} by", head_type="film", tail_type="person")
        for relation in ("directed", "produced", "edited")
    }
    return KnowledgeGraph.from_triples(triples, entities, relations, "credits")


def test_a_co_worker_credited_on_the_anchor_in_another_role_is_an_answer_a_reader_adds(tmp_path):
    """ "The producer of The Ladykillers who edited a film G produced": the graph lists Ethan Coen
    only, but Joel directed The Ladykillers, and directors produce their films (the graph's own rate),
    so a reader names Joel too."""
    chain = Constraint(anchor="/p/g", steps=[Step(relation="produced", direction="inverse"), Step(relation="edited")])
    cue = Constraint(anchor="/f/lady", steps=[Step(relation="produced")])
    credited = _world(_credits_graph(True), tmp_path)
    assert credited.cocredits.rates("produced", "forward")[credited.kg.relation_index["directed"], 0] > 0.8
    assert credited.rivals([chain, cue], "/p/ethan") > credited.config.rival_share
    uncredited = _world(_credits_graph(False), tmp_path)
    assert uncredited.rivals([chain, cue], "/p/ethan") < uncredited.config.rival_share


def test_relations_that_read_alike_are_one_step_to_the_world_estimate(tmp_path):
    """ "The place that has the capital Canberra and contains the university": an administrative area's
    capital and a country's read the same, so Australia answers as well as the territory."""
    triples = [
        Triple(head="/territory", relation="area_capital", tail="/canberra"),
        Triple(head="/australia", relation="country_capital", tail="/canberra"),
        Triple(head="/territory", relation="contains", tail="/canberra"),
        Triple(head="/australia", relation="contains", tail="/territory"),
        Triple(head="/canberra", relation="contains", tail="/university"),
    ]
    names = ["/territory", "/australia", "/canberra", "/university"]
    entities = {name: Entity(id=name, name=name[1:]) for name in names}
    relations = {
        "area_capital": Relation(id="area_capital", forward="has the capital", inverse="is the capital of"),
        "country_capital": Relation(
            id="country_capital", forward="has had the capital", inverse="has served as the capital of"
        ),
        "contains": Relation(id="contains", forward="contains", inverse="is located in"),
    }
    world = _world(
        KnowledgeGraph.from_triples(triples, entities, relations, "alike"), tmp_path, "contains:\n  transitive: true\n"
    )
    capital = Constraint(anchor="/canberra", steps=[Step(relation="area_capital", direction="inverse")])
    contains = Constraint(anchor="/university", steps=[Step(relation="contains", direction="inverse")])
    assert world.containment.alike[("area_capital", "inverse")] == [
        ("area_capital", "inverse"),
        ("country_capital", "inverse"),
    ]
    assert world.answers([capital, contains]) >= 2


def test_a_closed_class_member_gains_holders_as_the_world_grows_a_person_gains_only_unlisted_works(tmp_path):
    """A language has `scale` times the speakers in a bigger world; a composer scores no more films
    there, only the ones the graph leaves out."""
    graph = _capitals_graph()  # five composers with four films each: many-valued back from a composer
    closed = _world(graph, tmp_path, "music:\n  closed: true\n")
    assert closed.values_grown(Step(relation="music")) == closed.factor("music", "inverse") == closed.scale
    open_world = _world(graph, tmp_path)
    assert open_world.values_grown(Step(relation="music")) == open_world.config.works_listed < open_world.scale


def test_a_cue_leaving_one_candidate_of_the_answers_kind_gives_a_long_chain_away(tmp_path):
    """ "... It is also a subject of Bend It Like Beckham": two subjects in the graph, one of them a
    sport, so a question that asks for a sport is decided by that cue alone."""
    films = [f"/f/{n}" for n in range(6)]
    triples = [Triple(head="/sport/football", relation="subject_of", tail=film) for film in films]
    triples += [Triple(head="/topic/lesbian", relation="subject_of", tail=films[0])]
    triples += [Triple(head=f"/team/{n}", relation="plays", tail="/sport/football") for n in range(3)]
    triples += [Triple(head="/team/0", relation="based_in", tail="/city")]
    names = [*films, "/sport/football", "/topic/lesbian", "/team/0", "/team/1", "/team/2", "/city"]
    entities = {name: Entity(id=name, name=name.split("/")[-1]) for name in names}
    relations = {
        "subject_of": Relation(id="subject_of", forward="is a subject of the film", tail_type="film"),
        "plays": Relation(id="plays", forward="plays", head_type="sports team", tail_type="sport"),
        "based_in": Relation(id="based_in", forward="is based in", head_type="sports team", tail_type="city"),
    }
    graph = KnowledgeGraph.from_triples(triples, entities, relations, "kinds")
    world = _world(graph, tmp_path)
    # a long chain (its hops are decoration here) and the cue
    chain = Constraint(
        anchor="/city", steps=[Step(relation="based_in", direction="inverse"), Step(relation="plays")] * 3
    )
    cue = Constraint(anchor=films[0], steps=[Step(relation="subject_of", direction="inverse")])
    kind = AnswerKind(EntityTypes(graph), "/sport/football")
    assert kind.noun == "sport" and not kind.may_be("/topic/lesbian")
    assert effective_hops(graph, world, [chain, cue], kind).cues_only
    assert not effective_hops(graph, world, [chain, cue]).cues_only  # two subjects: as the graph counts


def test_a_soft_relation_is_never_the_step_into_the_answer(tmp_path):
    """`soft: true` (no reader can rule anyone out of "was influenced by"): no walk ends with it,
    and a value that is not true or false is refused in one line."""
    graph = _capitals_graph()
    world = _world(graph, tmp_path, "music: {soft: true}\n")
    assert world.soft == {"music"} and _world(graph, tmp_path).soft == frozenset()
    walker = RandomWalker(graph, WalkConfig(min_seed_degree=1), random.Random(0), soft=world.soft)
    walks = [walk for walk in (walker.walk(1) for _ in range(200)) if walk is not None]
    assert walks and all(walk.hops[-1].relation != "music" for walk in walks)
    path = tmp_path / "soft.yaml"
    path.write_text("music: {soft: 2}\n")
    with pytest.raises(ConfigError, match="soft must be true or false"):
        read_overrides(path)


def test_a_walk_of_the_longest_policy_ending_on_a_soft_relation_is_refused(tmp_path):
    """The longest policy ends where its search ends, so the generator refuses what the random
    walker never makes: a soft step into the answer."""
    path = tmp_path / "relation_overrides.yaml"
    path.write_text("music: {soft: true}\n")
    generator = MultihopGenerator(
        _capitals_graph(),
        WalkConfig(min_seed_degree=1, policy="longest"),
        ConstructConfig(),
        seed=0,
        world=WorldConfig(relation_overrides=path),
    )
    outcomes = [generator.attempt(1) for _ in range(100)]
    assert any(getattr(outcome, "reason", "") == "soft_last_step" for outcome in outcomes)
    assert all(outcome.path[-1].relation != "music" for outcome in outcomes if not hasattr(outcome, "reason"))


def _vague_chain_graph() -> KnowledgeGraph:
    """Twelve countries (a closed class), each with one capital and citizens who produced films of
    one genre, each shot in one town; Spy Game shot in one capital and in that town."""
    triples = [Triple(head=country, relation="capital", tail=f"{country}-city") for country in COUNTRIES]
    triples += [Triple(head=f"/p/{n}", relation="nationality", tail=COUNTRIES[n % 12]) for n in range(24)]
    triples += [Triple(head=f"/f/{n}", relation="produced_by", tail=f"/p/{n}") for n in range(24)]
    triples += [Triple(head=f"/f/{n}", relation="genre", tail="/g/drama") for n in range(24)]
    triples += [Triple(head="/f/spy", relation="locations", tail=tail) for tail in (f"{COUNTRIES[0]}-city", "/town")]
    triples += [Triple(head=f"/f/{n}", relation="locations", tail="/town") for n in range(24)]  # one place a film
    names = [f"/p/{n}" for n in range(24)] + [f"/f/{n}" for n in range(24)] + ["/g/drama", "/f/spy", "/town"]
    entities = {country: Entity(id=country, name=f"Country {country[3:]}") for country in COUNTRIES}
    entities |= {f"{country}-city": Entity(id=f"{country}-city", name=f"City {country[3:]}") for country in COUNTRIES}
    entities |= {name: Entity(id=name, name=name.split("/")[-1]) for name in names}
    relations = {
        "capital": Relation(id="capital", forward="has had the capital", head_type="country", tail_type="city"),
        "nationality": Relation(id="nationality", forward="is a citizen of", head_type="person", tail_type="country"),
        "produced_by": Relation(id="produced_by", forward="was produced by", head_type="film", tail_type="person"),
        "genre": Relation(id="genre", forward="belongs to the genre", head_type="film", tail_type="genre"),
        "locations": Relation(id="locations", forward="was filmed in", head_type="film", tail_type="city"),
    }
    return KnowledgeGraph.from_triples(triples, entities, relations, "vague")


def test_a_fact_on_the_values_of_a_closed_class_narrows_them_as_a_few_not_as_every_city(tmp_path):
    """ "A person produced a drama; this person is a citizen of a country; a city has served as its
    capital and was a filming location of Spy Game": the chain reaches every country, so the question
    is "a capital Spy Game was filmed in", and the world has as many of those as Spy Game has
    locations that are capitals. The capitals of a closed class are a few per member, not every city
    in the graph's capitals `scale` times over, so the fact is not taken to leave one."""
    graph = _vague_chain_graph()
    world = _world(graph, tmp_path)
    shot_there = Step(relation="capital", where=[{"anchor": "/f/spy", "relation": "locations", "direction": "forward"}])
    vague = Constraint(
        anchor="/g/drama",
        steps=[
            Step(relation="genre", direction="inverse"),
            Step(relation="produced_by"),
            Step(relation="nationality"),
            shot_there,
        ],
    )
    states = world.states(vague)
    assert states[-2].closed and len(states[-2].frontier) == len(COUNTRIES)  # every country
    assert states[-1].universe <= 2 * len(COUNTRIES) * world.factor("capital", "forward")  # not cities x scale
    assert world.answers([vague]) > world.config.max_answers  # world_ambiguous, as readers found
    # named, the country leaves its capitals alone: one
    named = Constraint(anchor=COUNTRIES[0], steps=[shot_there])
    assert world.answers([named]) == 1

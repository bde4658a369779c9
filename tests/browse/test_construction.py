"""An item's construction drawing: lanes from its constraints (or its path), the path's
intermediates named and marked hidden, other lanes' intermediates unnamed, facts hanging from the
entity they narrow, arrows the way edges are stored, and cues as numbered badges where they apply."""

from synth.browse.construction import draw
from synth.schemas import Constraint, Cue, Fact, Hop, Item, Provenance, Step


def _item(**fields) -> Item:
    return Item(
        id="i",
        question="q?",
        answer="Answer Name",
        recipe="multihop",
        provenance=Provenance(generator="test"),
        **{"hops": len(fields.get("path", [])) or 1, **fields},
    )


def _names(entity: str) -> str:
    return {"a": "Anchor A", "m": "Middle M", "x": "Answer Name", "f": "Fact F", "s": "Side S"}.get(entity, entity)


PATH = [Hop(head="a", relation="r1", tail="m"), Hop(head="x", relation="r2", tail="m", direction="inverse")]


def test_a_path_only_item_is_one_lane_named_at_its_start_and_hidden_after():
    drawing = draw(_item(path=PATH, answer_entity_id="x", cues=[Cue(text="one cue", candidates=3)]), _names, str)
    assert drawing is not None
    roles = {node.key: (node.role, node.label) for node in drawing.nodes}
    assert roles == {"a": ("anchor", "Anchor A"), "m": ("hidden", "Middle M"), "x": ("answer", "Answer Name")}
    edges = [(edge.source.key, edge.target.key, edge.lines) for edge in drawing.edges]
    assert edges == [("a", "m", ["r1"]), ("x", "m", ["r2"])]  # the inverse hop's arrow points back
    assert [(badge.number, badge.candidates) for badge in drawing.badges] == [(1, 3)]  # the lane's cue
    assert [node.key for node in sorted(drawing.nodes, key=lambda node: node.x)] == ["a", "m", "x"]
    assert len({node.y for node in drawing.nodes}) == 1


def test_constraints_are_lanes_ending_at_the_answer_with_facts_and_cues_where_they_apply():
    item = _item(
        path=PATH,
        answer_entity_id="x",
        constraints=[
            Constraint(
                anchor="a",
                steps=[
                    Step(relation="r1", where=[Fact(anchor="f", relation="r3")]),
                    Step(relation="r2", direction="inverse"),
                ],
            ),
            Constraint(anchor="s", steps=[Step(relation="r4"), Step(relation="r5")]),
        ],
        cues=[
            Cue(text="lane one", constraint=0, candidates=5),
            Cue(text="fact", constraint=0, step=0, candidates=9),
            Cue(text="lane two", constraint=1, candidates=2),
        ],
    )
    drawing = draw(item, _names, lambda relation: f"phrase of {relation}")
    assert drawing is not None
    nodes = {node.key: node for node in drawing.nodes}
    assert nodes["m"].label == "Middle M" and nodes["m"].hidden  # the path's lane names its intermediate
    assert nodes["f"].role == "anchor" and nodes["f"].x == nodes["m"].x and nodes["f"].y > nodes["m"].y
    unnamed = [node for node in drawing.nodes if node.label == "some entity"]
    assert len(unnamed) == 1 and unnamed[0].hidden and unnamed[0].y == nodes["s"].y  # the second lane's middle
    assert nodes["x"].role == "answer" and nodes["x"].y > nodes["a"].y and nodes["x"].x > nodes["m"].x
    edges = {(edge.source.key, edge.target.key) for edge in drawing.edges}
    assert {("a", "m"), ("f", "m"), ("x", "m"), ("s", unnamed[0].key), (unnamed[0].key, "x")} == edges
    assert all(edge.lines[0].startswith("phrase of") for edge in drawing.edges)
    badges = {badge.number: badge for badge in drawing.badges}
    assert sorted(badges) == [1, 2, 3]
    assert badges[2].x == nodes["m"].x - 80 and badges[2].y < nodes["m"].y  # on the entity the fact narrows
    assert badges[3].y > nodes["s"].y and badges[1].y > nodes["a"].y  # under each lane's anchor
    assert drawing.width > max(node.x for node in drawing.nodes) and drawing.height > nodes["f"].y


def test_an_item_without_a_construction_draws_nothing_and_long_phrases_wrap():
    assert draw(_item(), _names, str) is None
    long = _item(path=[Hop(head="a", relation="r", tail="x")])
    drawing = draw(long, _names, lambda _: "is a very long relation phrase that goes on and on and on")
    assert drawing is not None
    lines = drawing.edges[0].lines
    assert len(lines) == 2 and lines[1].endswith("…") and all(len(line) <= 24 for line in lines)

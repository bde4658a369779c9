"""An item's construction as a small drawing: what the question is built from, laid out in lanes.

Each constraint is a lane that starts at its named anchor and steps, entity by entity, to the
answer on the right; the lane that follows the item's path shows the path's real intermediates,
another lane's intermediates are unnamed ("some entity"). A fact that narrows a reached entity
(`Step.where`) hangs below it from its own named anchor. Entities the question does not name (the
intermediates and the answer) are marked hidden. Every arrow points the way the edge is stored
(head to tail), so an inverse step's arrow points back along its lane. Cues are numbered badges on
the lane or entity they describe, with the number of entities each admits on its own.

An item without constraints (a path only) is drawn as one lane along its path. The layout is a
fixed grid (lanes right-aligned on the answer), small enough to compute per page and to render as
inline SVG whose text the template escapes; a general graph layout engine (Graphviz) would add a
system binary for what a grid does exactly.
"""

import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

from synth.schemas import Constraint, Hop, Item, Step

COLUMN = 300
"""Horizontal distance between entity columns, in SVG units (a box and room for a relation's words)."""
LANE = 100
FACT_DROP = 72
"""How far below its entity a fact's anchor hangs."""
NODE_W, NODE_H = 160, 34
MARGIN = 24
LABEL_CHARS = 24
EDGE_LINE_CHARS = 22
"""A relation phrase is wrapped into lines of about this many characters, two at most."""
UNNAMED = "unnamed:"
"""Key prefix of an intermediate the item does not record (another lane's): drawn as "some entity"."""


@dataclass
class Node:
    key: str
    label: str
    title: str
    """The full name and id, shown on hover."""
    x: float
    y: float
    role: str
    """anchor (named in the question), hidden (not named), answer (hidden, what is asked)."""

    @property
    def hidden(self) -> bool:
        return self.role != "anchor"

    @property
    def box(self) -> tuple[float, float, float, float]:
        """x, y, width, height of the node's rectangle."""
        return self.x - NODE_W / 2, self.y - NODE_H / 2, NODE_W, NODE_H


@dataclass
class Edge:
    source: Node
    target: Node
    lines: list[str]
    """The relation's phrase, wrapped."""
    title: str

    def points(self) -> tuple[float, float, float, float]:
        """Where the line runs: from the source box's side to the target box's side."""
        (x1, y1), (x2, y2) = (self.source.x, self.source.y), (self.target.x, self.target.y)
        if abs(x2 - x1) < 1:  # a fact hanging straight below (or above) its entity
            dy = NODE_H / 2 if y2 > y1 else -NODE_H / 2
            return x1, y1 + dy, x2, y2 - dy
        dx = NODE_W / 2 if x2 > x1 else -NODE_W / 2
        return x1 + dx, y1, x2 - dx, y2


@dataclass
class Badge:
    number: int
    text: str
    """The cue's text (hover)."""
    candidates: int | None
    x: float
    y: float


@dataclass
class Drawing:
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    badges: list[Badge] = field(default_factory=list)
    width: float = 0
    height: float = 0


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _walk(path: list[Hop]) -> list[str]:
    """The entities the path visits in order (a hop's direction says which end it left from)."""
    if not path:
        return []
    first = path[0]
    entities = [first.head if first.direction == "forward" else first.tail]
    for hop in path:
        entities.append(hop.tail if hop.direction == "forward" else hop.head)
    return entities


def _lanes(item: Item) -> list[Constraint]:
    """The item's constraints, or one made from its path when it has none."""
    if item.constraints:
        return list(item.constraints)
    if not item.path:
        return []
    return [
        Constraint(
            anchor=_walk(item.path)[0],
            steps=[Step(relation=hop.relation, direction=hop.direction) for hop in item.path],
        )
    ]


def _on_path(lane: Constraint, path: list[Hop]) -> bool:
    """Whether the lane walks the item's path (so its intermediates are the path's entities)."""
    walk = _walk(path)
    return (
        bool(walk)
        and walk[0] == lane.anchor
        and len(lane.steps) == len(path)
        and all(
            step.relation == hop.relation and step.direction == hop.direction
            for step, hop in zip(lane.steps, path, strict=True)
        )
    )


def draw(item: Item, name: Callable[[str], str], relation: Callable[[str], str]) -> Drawing | None:
    """The item's construction laid out; None when it has no construction (a question without a graph).
    `name`: an entity's readable name; `relation`: a relation's readable phrase."""
    lanes = _lanes(item)
    if not lanes:
        return None
    drawing = Drawing()
    columns = max(len(lane.steps) for lane in lanes)
    lane_tops, top = [], MARGIN + NODE_H / 2
    for lane in lanes:
        lane_tops.append(top)
        top += LANE + (FACT_DROP if any(step.where for step in lane.steps) else 0)
    answer_key = item.answer_entity_id or (_walk(item.path)[-1] if item.path else "answer")
    answer = _node(
        drawing,
        answer_key,
        item.answer,
        MARGIN + NODE_W / 2 + columns * COLUMN,
        sum(lane_tops) / len(lane_tops),
        "answer",
    )
    placed = {answer_key: answer}
    cues_of = _cues_by_place(item, len(lanes))
    for number, (lane, y) in enumerate(zip(lanes, lane_tops)):
        walk = _walk(item.path) if _on_path(lane, item.path) else None
        first_column = columns - len(lane.steps)
        current = placed.get(lane.anchor) or _node(
            drawing, lane.anchor, name(lane.anchor), MARGIN + NODE_W / 2 + first_column * COLUMN, y, "anchor"
        )
        placed[lane.anchor] = current
        for index, step in enumerate(lane.steps):
            last = index == len(lane.steps) - 1
            if last:
                reached = answer
            else:
                key = walk[index + 1] if walk else f"{UNNAMED}{number}-{index}"
                label = name(key) if walk else "some entity"
                reached = placed.get(key) or _node(
                    drawing, key, label, MARGIN + NODE_W / 2 + (first_column + index + 1) * COLUMN, y, "hidden"
                )
                placed[key] = reached
            forward = step.direction == "forward"
            _edge(drawing, current if forward else reached, reached if forward else current, step.relation, relation)
            for fact_index, fact in enumerate(step.where):
                anchor = placed.get(fact.anchor) or _node(
                    drawing,
                    fact.anchor,
                    name(fact.anchor),
                    reached.x + fact_index * (NODE_W + 16),
                    reached.y + FACT_DROP,
                    "anchor",
                )
                placed[fact.anchor] = anchor
                fact_forward = fact.direction == "forward"
                _edge(
                    drawing,
                    anchor if fact_forward else reached,
                    reached if fact_forward else anchor,
                    fact.relation,
                    relation,
                )
            for cue_number, cue in cues_of.get((number, index), []):
                drawing.badges.append(
                    Badge(cue_number, cue.text, cue.candidates, reached.x - NODE_W / 2, reached.y - NODE_H / 2)
                )
            current = reached
        start = placed[lane.anchor]
        for cue_number, cue in cues_of.get((number, None), []):
            drawing.badges.append(
                Badge(cue_number, cue.text, cue.candidates, start.x - NODE_W / 2, y + NODE_H / 2 + 14)
            )
    drawing.badges.sort(key=lambda badge: badge.number)
    _stack_badges(drawing.badges)
    drawing.width = max(node.x for node in drawing.nodes) + NODE_W / 2 + MARGIN
    drawing.height = max(node.y for node in drawing.nodes) + NODE_H / 2 + MARGIN
    return drawing


def _cues_by_place(item: Item, lanes: int) -> dict[tuple[int, int | None], list]:
    """(lane, step or None for the whole lane) -> the numbered cues about it, of `lanes` lanes. A cue
    without a constraint is about the single lane of a path-only item, when there is one."""
    places: dict[tuple[int, int | None], list] = {}
    for number, cue in enumerate(item.cues, start=1):
        lane = cue.constraint if cue.constraint is not None else (0 if lanes == 1 else None)
        if lane is not None and lane < lanes:
            places.setdefault((lane, cue.step), []).append((number, cue))
    return places


def _stack_badges(badges: list[Badge]) -> None:
    """Badges at one place side by side instead of on top of each other."""
    seen: dict[tuple[float, float], int] = {}
    for badge in badges:
        place = (badge.x, badge.y)
        badge.x += seen.get(place, 0) * 84
        seen[place] = seen.get(place, 0) + 1


def _node(drawing: Drawing, key: str, label: str, x: float, y: float, role: str) -> Node:
    title = label if key.startswith(UNNAMED) else f"{label} ({key})" if label != key else key
    node = Node(key, _short(label), title, x, y, role)
    drawing.nodes.append(node)
    return node


def _edge(drawing: Drawing, source: Node, target: Node, relation_id: str, relation: Callable[[str], str]) -> None:
    phrase = relation(relation_id)
    drawing.edges.append(Edge(source, target, _wrap(phrase), f"{phrase} ({relation_id})"))


def _wrap(phrase: str) -> list[str]:
    """The phrase in lines of about EDGE_LINE_CHARS, the second shortened if it runs over."""
    lines = textwrap.wrap(phrase, EDGE_LINE_CHARS, break_long_words=True) or [phrase]
    return lines if len(lines) <= 2 else [lines[0], _short(" ".join(lines[1:]), EDGE_LINE_CHARS)]

"""Effective hops: how many hops a solver really needs, whatever the chain's length says.

A 7-hop chain with an appended cue "it is also located in Manitoba" is a 1-hop question: the cue
alone leaves a couple of candidates and the chain is decoration. The question's parts are the chain,
the shortcuts into it (a fact on an intermediate, followed by the rest of the chain: a solver starts
from the fact's named anchor) and the answer's cues. A small combination of parts (one or two, none
of them the whole chain) is a shortcut when it leaves at most `SHORTCUT_CANDIDATES` candidates both
in the graph and in the larger world (so a cue about an open class, "born in 1970", needs the world's
scale, and a cue about a closed one does not). Only candidates of the kind the question names count
(`AnswerKind`): "a subject of Bend It Like Beckham" is two subjects in the graph, one sport, and gives a
question that asks for a sport away. The effective hops are the fewest hops of any shortcut (the
longest part in it: parts are searched side by side), else the chain's length.

A chain can also be loose in the middle: "a film was shot in this place; a person composed its music;
this person died in a city" reaches, in the world, a large share of all cities (a film's composer
died in most large ones), so the hops before that point narrow nothing and a solver starts there
(`WorldConfig.loose_share`). Where the whole chain is that loose, the answer's cues decide: "a state
containing the place a film's composer died; it is also a filming location of Seabiscuit" is one
hop, Seabiscuit's locations. Readers found such chains decided by their last clue, with a second
answer through it (docs/audit.md, round 28).
"""

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from synth.kg.graph import KnowledgeGraph
from synth.kg.multiplicity import SetState, WorldModel
from synth.kg.types import AnswerKind
from synth.schemas import Constraint, Step

SHORTCUT_CANDIDATES = 2
"""A part (or pair) leaving this many candidates or fewer gives the answer away."""
LONG_CHAIN = 5
"""Chains of this many hops or more: no appended cue may decide one on its own, whatever the tolerance."""


@dataclass(frozen=True)
class Part:
    constraint: Constraint
    hops: int
    label: str
    cue: bool
    """An answer cue appended to the chain (not the chain or a way into it)."""


@dataclass(frozen=True)
class Shortcut:
    hops: int
    """The effective hops: the shortcut's longest part, or the chain's length without a shortcut."""
    label: str
    """What gives the answer away ("" without a shortcut)."""
    cues_only: bool
    """The shortcut is made of appended cues alone (the chain is not needed at all)."""


def parts(constraints: list[Constraint]) -> list[Part]:
    """The chain, every way into it through a fact on an intermediate, and the answer's cues."""
    chain, *cues = constraints
    length = len(chain.steps)
    found = [Part(chain, length, "the chain", False)]
    for position, step in enumerate(chain.steps):
        for fact in step.where:
            others = [other for other in step.where if other is not fact]
            entry = Step(relation=fact.relation, direction=fact.direction, where=others)
            into = Constraint(anchor=fact.anchor, steps=[entry, *chain.steps[position + 1 :]])
            found.append(Part(into, 1 + length - position - 1, f"the fact from {fact.anchor} and the rest", False))
    found += [Part(cue, len(cue.steps), f"the cue from {cue.anchor}", True) for cue in cues]
    return found


def effective_hops(
    kg: KnowledgeGraph, world: WorldModel | None, constraints: list[Constraint], kind: AnswerKind | None = None
) -> Shortcut:
    """The fewest hops a solver needs for the question these constraints make (see the module), where
    the question names its answer's `kind`."""
    shortcut = _shortcut(kg, world, constraints, kind)
    if world is None:
        return shortcut
    chain, *cues = constraints
    loose = loose_point(world, chain, last=bool(cues))
    if loose is None:
        return shortcut
    position, share = loose
    if position == len(chain.steps):  # the whole chain is loose: the answer's cues decide
        hops = max(len(cue.steps) for cue in cues)
        label = f"the chain reaches {share:.0%} of its kind: the cues decide"
    else:
        hops = len(chain.steps) - position
        label = f"the chain's first {position} hops reach {share:.0%} of their kind: they narrow nothing"
    if hops < shortcut.hops:
        return Shortcut(hops, label, position == len(chain.steps))
    return shortcut


def loose_point(world: WorldModel, chain: Constraint, last: bool) -> tuple[int, float] | None:
    """(hops, share) of the chain's last set (its answers' too where `last`) that holds `loose_share`
    or more of its universe in the world, or None: the hops up to it narrow nothing."""
    states = world.states(chain)
    found = None
    for position in range(1, len(chain.steps) + (1 if last else 0)):
        share = states[position].size / max(states[position].universe, 1.0)
        if share >= world.config.loose_share:
            found = (position, min(share, 1.0))
    return found


def _shortcut(
    kg: KnowledgeGraph, world: WorldModel | None, constraints: list[Constraint], kind: AnswerKind | None
) -> Shortcut:
    """The fewest hops of a part or a pair of parts that leaves a couple of candidates (see the module)."""
    chain_hops = len(constraints[0].steps)
    all_parts = parts(constraints)
    candidates = [part for part in all_parts[1:] if part.hops < chain_hops]
    if not candidates:
        return Shortcut(chain_hops, "", False)
    frontiers = {id(part): kg.matching([part.constraint]) for part in candidates}
    states: dict[int, SetState] = {}
    best: Shortcut | None = None
    for size in (1, 2):
        for group in combinations(candidates, size):
            hops = max(part.hops for part in group)
            if best is not None and hops >= best.hops:
                continue
            nodes = frontiers[id(group[0])]
            for part in group[1:]:
                nodes = np.intersect1d(nodes, frontiers[id(part)], assume_unique=True)
            share = 1.0  # of the candidates, those of the answer's kind
            if kind is not None:
                nodes, share = kind.narrow(nodes)
            if not 0 < len(nodes) <= SHORTCUT_CANDIDATES:
                continue
            if world is not None:
                for part in group:
                    if id(part) not in states:
                        states[id(part)] = world.states(part.constraint)[-1]
                estimate = world.answers_of([states[id(part)] for part in group], len(nodes)) * share
                if max(estimate, len(nodes)) > SHORTCUT_CANDIDATES:
                    continue
            label = " with ".join(part.label for part in group)
            best = Shortcut(hops, f"{label} leave {len(nodes)} candidate(s)", all(part.cue for part in group))
    return best or Shortcut(chain_hops, "", False)

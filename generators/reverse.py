"""Reverse question construction: start from the answer, choose cues that only together identify it.

The walk's chain (anchor -> ... -> answer) is the first cue; its intermediates are never named, only
described. First, up to `describe_intermediates` of them get one of their own facts ("a person who
was born in Springfield *and who won an Academy Award*"), which turns the chain into a subgraph with
branches, as WebSailor's obfuscated entities do. Then, while following the question's constraints
from its named entities reaches more than one entity, a cue is added: a fact about the answer (a
new constraint) or about an intermediate (a `Step.where` fact), greedily the one that cuts the
candidate set most (ties: the one that alone matches the most entities, i.e. the most oblique), in
the spirit of BMGQ's composed cues. If no cue set singles the answer out, the walk is rejected as
not_unique.

With `minimal_cues` (on by default) cues that uniqueness does not need are dropped again, and with
`min_cue_candidates: 2` (the default) no added cue matches only one entity: every cue is needed and
none finds the answer on its own, as in WebShaper's and BrowseComp's questions.

Every cue is checked against the graph and records how many entities satisfy it alone. With a
`WorldModel` (`synth.kg.multiplicity`) the answer must also stay unique in a world larger than the
graph: cues are added while the estimate of answers there is above `max_answers` (a fact that is
world-bounded from its own named anchor pins a many-valued chain), and hub facts (gender, a top
genre, a common language) are never cues.
"""

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import Field

from synth.config import FrozenConfig
from synth.generators.kg_walk import Walk
from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph, intersect
from synth.kg.multiplicity import SetState, WorldModel
from synth.kg.names import NameOverlap
from synth.kg.shortcuts import LONG_CHAIN, SHORTCUT_CANDIDATES
from synth.kg.types import AnswerKind, EntityTypes
from synth.schemas import Constraint, Fact, Hop, Step
from synth.schemas.item import Direction

LASTING_KEPT = 200_000
"""Entities whose walk-independent facts construction keeps (`_lasting_options`) before starting over."""


class ConstructConfig(FrozenConfig):
    max_extra_cues: int = Field(default=2, ge=0, description="Cues added beyond the chain to make the answer unique.")
    max_cue_anchor_degree: int = Field(
        default=5000, ge=1, description="Entities named in cues have at most this many edges."
    )
    describe_intermediates: int = Field(
        default=0,
        ge=0,
        description="Intermediates described by one of their own facts even when the chain is already unique "
        "(branches of the question's subgraph); 0 keeps plain chains (facts are still added where uniqueness needs "
        "them).",
    )
    fact_candidates: int = Field(
        default=16,
        ge=1,
        description="Facts of one intermediate considered per cue (a random sample), bounding the cost: each is "
        "scored by re-estimating the chain's world sets from there. 16 (32 before round 36) needs no more "
        "candidates per published item (111 plain against 117) at 0.031 s per plain item against 0.037 "
        "(benchmarks/bench_phrasing.py), every item through the same checks.",
    )
    min_cue_candidates: int = Field(
        default=2,
        ge=1,
        description="Entities an added cue must match on its own; 2: no single cue names the answer or an "
        "intermediate, so every cue and every hop is needed.",
    )
    hops_tolerance: int = Field(
        default=1,
        ge=0,
        description="A question's effective hops (the fewest a solver needs, synth.kg.shortcuts) may fall this far "
        "below its chain's length.",
    )
    below_tolerance: Literal["reject", "relabel"] = Field(
        default="reject",
        description="An item whose effective hops fall further: rejected (shortcut_cue), or kept labeled with its "
        "effective hops. Either way no appended cue decides a chain of 5 hops or more on its own.",
    )
    max_answer_share: float = Field(
        default=1.0,
        gt=0,
        le=1,
        description="No answer is constructed for more than this share of a run's items (at least 5): walks end on "
        "a few popular entities (Football is the answer of a quarter of 1,000 plain constructions on the bundled "
        "graph), so an RL set learns a prior; 0.02 caps each answer at 2%. 1 (the default) is no cap: a small "
        "graph has few answers, and a cap can leave a run short of n.",
    )
    minimal_cues: bool = Field(
        default=True,
        description="Drop every described fact and answer cue that uniqueness does not need, so every cue left is "
        "needed.",
    )


@dataclass(frozen=True)
class DescribedFact:
    step: int
    """Index of the chain step whose entity (an intermediate) the fact describes."""
    fact: Fact
    candidates: int
    """How many entities have this fact."""
    edge: Hop


@dataclass(frozen=True)
class Construction:
    walk: Walk
    answer: str
    constraints: tuple[Constraint, ...]
    """The chain (with its intermediates' facts) first, then the answer's cues; their intersection is exactly
    {answer}."""
    candidates: tuple[int, ...]
    """How many entities each constraint matches on its own."""
    facts: tuple[DescribedFact, ...]
    """The facts describing intermediates, in the order they were added."""
    cue_edges: tuple[Hop, ...]
    """Edges of the answer's added cues (answer <-> a named entity), which need evidence too."""
    world_answers: float = 1.0
    """Estimated answers in a world larger than the graph (1.0 without a world model)."""

    @property
    def edges(self) -> tuple[Hop, ...]:
        return self.walk.hops + tuple(fact.edge for fact in self.facts) + self.cue_edges


def chain_constraint(walk: Walk, facts: Sequence[DescribedFact] = ()) -> Constraint:
    where: dict[int, list[Fact]] = {}
    for described in facts:
        where.setdefault(described.step, []).append(described.fact)
    steps = [
        Step(relation=hop.relation, direction=hop.direction, where=where.get(index, []))
        for index, hop in enumerate(walk.hops)
    ]
    return Constraint(anchor=walk.entities[0], steps=steps)


def reverse_direction(direction: str) -> Direction:
    return INVERSE if direction == FORWARD else FORWARD


@dataclass(frozen=True)
class _Option:
    """One fact of `entity` that could become a cue: stepping from the named `other` over
    `relation` in `direction` reaches `entity`. Cheap to make; records are built only for winners."""

    entity: str
    other: str
    relation: str
    direction: Direction
    words: frozenset[str] = field(default=frozenset(), compare=False, repr=False)
    """Every word of `other`'s names (most options share none with a walk's hidden entities)."""

    @property
    def step(self) -> Step:
        return Step(relation=self.relation, direction=self.direction)

    @property
    def edge(self) -> Hop:
        head, tail = (self.other, self.entity) if self.direction == FORWARD else (self.entity, self.other)
        return Hop(head=head, relation=self.relation, tail=tail, direction=self.direction)


class ReverseConstructor:
    """Works in node-number arrays (KnowledgeGraph.frontiers/expand): scoring a fact about an
    intermediate re-follows only the chain's suffix from that intermediate's narrowed frontier."""

    def __init__(
        self,
        kg: KnowledgeGraph,
        config: ConstructConfig,
        rng: random.Random | None = None,
        world: WorldModel | None = None,
        avoid: Callable[[str], bool] | None = None,
        types: EntityTypes | None = None,
        stated: KnowledgeGraph | None = None,
    ):
        """`world`: keep answers unique in a larger world and hub facts out of cues (None: the graph only).
        `avoid`: entities no cue may name (a node that stands for two things). `types`: what kind of
        thing each entity is, so a long chain gets no cue that gives away an answer of the kind the
        question names (`AnswerKind`). `stated`: the graph cues are taken from (`kg` less the facts a
        question counts but never states, synth.kg.unstated); candidates are counted in `kg`."""
        self.kg = kg
        self.stated = stated if stated is not None else kg
        self.types = types
        self._kind: AnswerKind | None = None
        """The kind of the answer of the walk being constructed."""
        self.avoid = avoid or (lambda entity: False)
        self.world = world
        self.config = config
        self.rng = rng or random.Random(0)
        self.names = NameOverlap(kg.names)
        self._hidden: tuple[str, ...] = ()
        """The walk's hidden entities (intermediates and answer) while one walk is constructed."""
        self._overlaps = self.names.overlapping(())
        """Whether an entity's name overlaps a hidden entity's (`NameOverlap.overlapping`)."""
        self._hidden_words: frozenset[str] = frozenset()
        """Every word of the hidden entities' names."""
        self._usable: dict[str, list[_Option]] = {}
        """Per entity of the walk being constructed: its usable facts (`_usable_options`)."""
        self._suffixes: dict[tuple, SetState] = {}
        """Per (chain's facts, intermediate, option) of the walk being constructed: the chain's world state
        with the option as a fact (`_best_cue` scores the same options again after adding an answer cue)."""
        self._lasting: dict[str, list[_Option]] = {}
        """Per entity: its facts any walk may use (`_lasting_options`)."""
        self._option_words: dict[str, dict[str, list[int]]] = {}
        """Per entity: word -> the indices of its lasting facts whose named entity has that word."""
        self._cue_sizes: dict[str, list[tuple[float, int, _Option]]] = {}
        """Per entity: its lasting facts by world size (`_by_cue_size`)."""

    def construct(self, walk: Walk) -> Construction | None:
        """A cue set whose conjunction identifies the walk's last entity, or None if none is found."""
        answer, intermediates = walk.entities[-1], walk.entities[1:-1]
        self._hide(walk.entities[1:])
        self._kind = AnswerKind(self.types, answer) if self.types is not None else None
        if self.anchor_overlap(walk):
            return None
        used = set(walk.entities)
        facts: list[DescribedFact] = []
        described = sorted(
            self.rng.sample(range(len(intermediates)), min(self.config.describe_intermediates, len(intermediates)))
        )
        for position in described:
            options = self._options(intermediates[position], used)
            self.rng.shuffle(options)
            counted = ((option, len(self._matches(option))) for option in options)
            oblique = next(((option, count) for option, count in counted if count >= 2), None)
            if oblique is not None:  # a fact only this entity has would name it in other words
                facts.append(self._fact(position, *oblique))
                used.add(oblique[0].other)
        answer_cues: list[tuple[Constraint, int, Hop]] = []
        chain = chain_constraint(walk, facts)
        remaining = self.kg.frontiers(chain.anchor, chain.steps)[-1]
        chain_count = len(remaining)
        for _ in range(self.config.max_extra_cues):
            estimate = self._answers(chain, [cue for cue, _, _ in answer_cues], len(remaining))
            needed = len(remaining) > 1 or (self.world is not None and estimate > self.world.config.max_answers)
            best = self._best_cue(walk, chain, answer_cues, remaining, used) if needed else None
            if best is None:
                break
            remaining, option, position, count = best
            used.add(option.other)
            if position is None:
                answer_cues.append((Constraint(anchor=option.other, steps=[option.step]), count, option.edge))
            else:
                facts.append(self._fact(position, option, count))
                chain = chain_constraint(walk, facts)
                chain_count = len(self.kg.frontiers(chain.anchor, chain.steps)[-1])
        if self.kg.ids(remaining) != {answer}:
            return None
        if self.config.minimal_cues:
            facts, answer_cues = self._necessary(walk, facts, answer_cues)
            chain = chain_constraint(walk, facts)
            chain_count = len(self.kg.frontiers(chain.anchor, chain.steps)[-1])
        return Construction(
            walk=walk,
            answer=answer,
            constraints=(chain, *(cue for cue, _, _ in answer_cues)),
            candidates=(chain_count, *(count for _, count, _ in answer_cues)),
            facts=tuple(facts),
            cue_edges=tuple(edge for _, _, edge in answer_cues),
            world_answers=self._answers(chain, [cue for cue, _, _ in answer_cues], 1),
        )

    def world_floor(self, walk: Walk) -> float:
        """The fewest answers in the world that any cues construction could add to the walk leave
        (`WorldModel.floor` over the cues `_best_cue` may add; 1 without a world model): above
        `max_answers`, construction is hopeless."""
        if self.world is None:
            return 1.0
        self._hide(walk.entities[1:])
        no_giveaway, used, smallest = self._no_giveaway(walk), set(walk.entities), []
        for size, matches, option in self._by_cue_size(walk.entities[-1]):  # the floor needs the smallest only
            if no_giveaway and size <= SHORTCUT_CANDIDATES and matches <= SHORTCUT_CANDIDATES:
                continue  # a cue `_best_cue` never adds to this chain
            if (
                option.other not in used
                and option.relation not in self.world.soft
                and (option.words.isdisjoint(self._hidden_words) or not self._overlaps(option.other))
            ):
                smallest = [size]
                break
        last = walk.hops[-1]
        return self.world.floor(Step(relation=last.relation, direction=last.direction), smallest)

    def _by_cue_size(self, entity: str) -> list[tuple[float, int, _Option]]:
        """(world size, entities with the fact, option) of `entity`'s lasting facts that match at least
        `min_cue_candidates` entities, smallest world size first (kept like `_lasting_options`)."""
        found = self._cue_sizes.get(entity)
        if found is None:
            if len(self._cue_sizes) >= LASTING_KEPT:
                self._cue_sizes.clear()
            world = self.world
            assert world is not None
            found = self._cue_sizes[entity] = sorted(
                (
                    (world.cue_size(option.other, option.relation, option.direction)[0], matches, option)
                    for option in self._lasting_options(entity)
                    if (matches := len(self._matches(option))) >= self.config.min_cue_candidates
                ),
                key=lambda entry: entry[0],
            )
        return found

    def _answers(self, chain: Constraint, answer_cues: list[Constraint], graph_answers: int) -> float:
        """Estimated answers in the larger world (the graph's count without a world model)."""
        if self.world is None:
            return float(graph_answers)
        return self.world.answers([chain, *answer_cues], graph_answers)

    def _necessary(self, walk: Walk, facts: list[DescribedFact], answer_cues: list) -> tuple[list[DescribedFact], list]:
        """The facts and answer cues left after dropping, one at a time in the order they were
        added, each one the answer stays unique without. One pass leaves a minimal set: a cue kept
        was needed beside a superset of the final cues, so it is needed beside the final ones
        (fewer cues never match fewer entities)."""
        for fact in list(facts):
            trial = [kept for kept in facts if kept is not fact]
            if self.unique(walk, trial, [cue for cue, _, _ in answer_cues]):
                facts = trial
        for entry in list(answer_cues):
            trial = [kept for kept in answer_cues if kept is not entry]
            if self.unique(walk, facts, [cue for cue, _, _ in trial]):
                answer_cues = trial
        return facts, answer_cues

    def unique(self, walk: Walk, facts: list[DescribedFact], answer_cues: list[Constraint]) -> bool:
        """Whether the chain with these facts and these answer cues matches exactly the walk's answer
        (and, with a world model, would match no more than `max_answers` in the larger world)."""
        chain = chain_constraint(walk, facts)
        if self.kg.ids(self.kg.matching([chain, *answer_cues])) != {walk.entities[-1]}:
            return False
        return self.world is None or self._answers(chain, answer_cues, 1) <= self.world.config.max_answers

    def obscure_anchor(self, walk: Walk) -> Walk | None:
        """The walk with one hop prepended from a named neighbour of its anchor, so the anchor becomes
        a hidden entity that construction describes by its own facts (the obfuscated style); the
        new first fact must hold for at least two entities, or it would name the anchor in other
        words. None when the anchor has no such neighbour."""
        self._hide(walk.entities)
        options = self._options(walk.entities[0], set(walk.entities))
        self.rng.shuffle(options)
        for option in options:
            if len(self._matches(option)) >= 2:
                return Walk((option.other, *walk.entities), (option.edge, *walk.hops))
        return None

    def anchor_overlap(self, walk: Walk) -> bool:
        """Whether the walk's anchor names a hidden entity inside its own name ("University of
        Washington" before a hidden "Washington"): such a walk cannot make a question."""
        return self.names.any_overlap(walk.entities[0], walk.entities[1:])

    @staticmethod
    def _fact(position: int, option: _Option, candidates: int) -> DescribedFact:
        fact = Fact(anchor=option.other, relation=option.relation, direction=option.direction)
        return DescribedFact(step=position, fact=fact, candidates=candidates, edge=option.edge)

    def _matches(self, option: _Option) -> np.ndarray:
        """Node numbers (sorted) of every entity that has the option's fact."""
        return self.kg.fact_nodes(option.other, option.relation, option.direction)

    def _hide(self, hidden: tuple[str, ...]) -> None:
        """Start a construction whose hidden entities are `hidden` (what no cue may name)."""
        if hidden != self._hidden:
            self._hidden = hidden
            self._overlaps = self.names.overlapping(hidden)
            self._hidden_words = self.names.words_of(hidden)
            self._usable.clear()
            self._suffixes.clear()

    def _options(self, entity: str, used: set[str]) -> list[_Option]:
        """Facts linking `entity` to a named, non-hub entity that the question does not use yet."""
        return [option for option in self._usable_of(entity) if option.other not in used]

    def _usable_of(self, entity: str) -> list[_Option]:
        """`_usable_options`, kept for the walk: the same entity is looked at once per added cue."""
        if entity not in self._usable:
            self._usable[entity] = self._usable_options(entity)
        return self._usable[entity]

    def _sampled_options(self, entity: str, used: set[str]) -> list[_Option]:
        """A random `fact_candidates` of `_options(entity, used)`, drawn from the kept list without
        filtering all of it first (an intermediate such as a country has thousands of facts): the
        draw covers the few `used` ones it may meet, which are then left out."""
        every, wanted = self._usable_of(entity), self.config.fact_candidates
        drawn = self.rng.sample(every, min(len(every), wanted + len(used)))
        return [option for option in drawn if option.other not in used][:wanted]

    def _usable_options(self, entity: str) -> list[_Option]:
        """Facts linking `entity` to a named entity that is no hub, not too big and names no hidden entity."""
        lasting, by_word = self._lasting_options(entity), self._option_words[entity]
        sharing = {index for word in self._hidden_words for index in by_word.get(word, ())}  # few share a word
        named = {index for index in sharing if self._overlaps(lasting[index].other)}
        return [option for index, option in enumerate(lasting) if index not in named] if named else lasting

    def _lasting_options(self, entity: str) -> list[_Option]:
        """`entity`'s facts that any walk may use (named, no hub, not too big, trusted, not avoided), kept
        across walks: construction meets the same entities walk after walk."""
        found = self._lasting.get(entity)
        if found is not None:
            return found
        if len(self._lasting) >= LASTING_KEPT:
            self._lasting.clear()
            self._option_words.clear()
        kg, cap, world = self.stated, self.config.max_cue_anchor_degree, self.world
        found = self._lasting[entity] = [
            _Option(entity, other, relation, reverse_direction(direction), self.names.words(other))
            for relation, direction in kg.incident(entity)
            if world is None or relation not in world.untrusted
            for other in kg.neighbors(entity, relation, direction)
            if other in kg.entities
            and self.kg.degree(other) <= cap
            and not (world is not None and world.hub(other, relation, reverse_direction(direction)))
            and not self.avoid(other)
        ]
        by_word: dict[str, list[int]] = {}
        for index, option in enumerate(found):
            for word in option.words:
                by_word.setdefault(word, []).append(index)
        self._option_words[entity] = by_word
        return found

    def _no_giveaway(self, walk: Walk) -> bool:
        """Whether a cue that alone leaves a couple of candidates may not be added: never on a long
        chain, and not where the item would then be rejected anyway (its effective hops, 1, fall
        more than `hops_tolerance` below the chain's: synth.kg.shortcuts)."""
        hops = len(walk.hops)
        return hops >= LONG_CHAIN or (self.config.below_tolerance == "reject" and 1 < hops - self.config.hops_tolerance)

    def _gives_away(self, world_size: float, matches: np.ndarray) -> bool:
        """Whether a cue alone leaves a couple of candidates of the answer's kind, in the graph and in the
        world (its world size narrowed to the share of its graph candidates of that kind)."""
        typed, share = self._kind.narrow(matches) if self._kind is not None else (matches, 1.0)
        return world_size * share <= SHORTCUT_CANDIDATES and len(typed) <= SHORTCUT_CANDIDATES

    def _best_cue(self, walk: Walk, chain: Constraint, answer_cues: list, remaining: np.ndarray, used: set[str]):
        """(new candidate nodes, option, intermediate position or None for an answer cue, entities
        with the fact) of the cue that leaves the fewest answers in the larger world and then in the
        graph, or None if no cue improves either."""
        world, least = self.world, self.config.min_cue_candidates
        no_giveaway = self._no_giveaway(walk)
        states = world.states(chain) if world is not None else None  # the chain's sets, once
        fixed = [world.set_size(cue) for cue, _, _ in answer_cues] if world is not None else []
        scored = []  # (world answers, candidates left, entities with the fact, option, position)
        combined = (
            world.combiner([states[-1].sizes, *fixed], states[-1].closed) if world is not None and states else None
        )
        soft = world.soft if world is not None else frozenset()
        for option in self._options(walk.entities[-1], used):
            if option.relation in soft:  # no reader can rule a rival out of it
                continue
            matches = self._matches(option)
            if len(matches) < least:
                continue
            left = intersect(remaining, matches)
            estimate = float(len(left))
            if world is not None and combined is not None:
                cue = world.cue_size(option.other, option.relation, option.direction)
                if no_giveaway and self._gives_away(cue[0], matches):
                    continue  # alone it leaves a couple of candidates: the chain would be decoration
                estimate = combined(cue, len(left))
            scored.append((estimate, left, len(matches), option, None))
        prefix = [state.frontier for state in states] if states else self.kg.frontiers(chain.anchor, chain.steps)
        chained = tuple(
            (index, fact.anchor, fact.relation, fact.direction)
            for index, step in enumerate(chain.steps)
            for fact in step.where
        )  # the chain's facts: with the walk, what its states depend on
        for position, entity in enumerate(walk.entities[1:-1]):
            before = prefix[position + 1]  # the candidates for this intermediate
            for option in self._sampled_options(entity, used):
                matches = self._matches(option)
                if len(matches) < least:
                    continue
                narrowed = intersect(before, matches)
                if len(narrowed) == len(before):  # a fact every candidate has cuts nothing
                    continue
                rest = chain.steps[position + 1 :]
                if world is None or states is None:
                    reached = self.kg.expand(narrowed, rest)  # the chain's set, with the fact
                else:
                    key = (chained, position, option)
                    suffix = self._suffixes.get(key)
                    if suffix is None:  # the same chain is scored again after an answer cue is added
                        step = chain.steps[position]
                        fact = self._fact(position, option, len(matches)).fact
                        suffix = self._suffixes[key] = world.extend(
                            states[position], [step.model_copy(update={"where": [*step.where, fact]}), *rest]
                        )
                    reached = suffix.frontier
                left = intersect(remaining, reached)
                estimate = (
                    world.combine([suffix.sizes, *fixed], len(left), suffix.closed)  # pyright: ignore[reportPossiblyUnbound]
                    if world is not None and states is not None
                    else float(len(left))
                )
                scored.append((estimate, left, len(matches), option, position))
        scored = [entry for entry in scored if len(entry[1])]
        if not scored:
            return None
        estimate, left, count, option, position = min(
            scored,
            key=lambda entry: (
                entry[0],
                len(entry[1]),
                -entry[2],
                entry[3].relation,
                entry[3].other,
                entry[4] is not None,
            ),
        )
        before = self._answers(chain, [cue for cue, _, _ in answer_cues], len(remaining))
        return (left, option, position, count) if len(left) < len(remaining) or estimate < before else None

"""How many answers a question would have in a world larger than the graph, estimated from the
graph's own statistics, and calibrated against what readers find (`synth audit`).

A knowledge graph is a small, uneven sample of the world: FB15k-237 knows about 14,000 entities.
A question whose answer is unique in the graph only because the graph lacks the other answers ("a
film written by a person influenced by J. G. Ballard") rewards one of many right answers. What
stays unique in a bigger world is what is pinned by steps that stay small there: the birthplace of
X, the director of film Z. Such a step is *world-bounded*: over the graph, the entities that have
the relation in that direction have one or two values each (`bounded_mean`, `bounded_p90`), and a
bigger world gives each of them no more, or their mean where several are usual (`partial_mean`:
several citizenships). A many-valued step (the people born in a city, the films of a genre) grows
with the world: `scale` times as many, except into a closed class (countries, languages, time
zones, genres: synth.kg.relation_profile), which stays at its size (`closed_growth`). Containment
is read at every level (synth.kg.containment).

The estimate follows each constraint from its named anchor; a fact narrows it to at most the fact's
own world set and to the share of the step's universe that has the fact, except that facts over one
relation go together (a journalist, a poet and a professor: no product). The answer set is the
intersection of the constraints: at most the smallest, about the product of their sizes over the
universe if independent, but never below the smallest narrowed by `narrowing`: readers showed that
clues which look independent rarely are, so a unique answer needs one clue that alone leaves a
handful. The estimate is never below the graph's answer count as the world reads the steps; a
question is kept when it is 1.

A cue is a hub when its value is shared by a large share of the entities that have the relation
at all (gender Male, English Language, Drama, an eastern time zone, actor): it says almost
nothing, and questions never use one.
"""

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
from pydantic import Field

from synth.config import FrozenConfig
from synth.kg.cocredits import CoCredits
from synth.kg.containment import Containment
from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph, intersect, kept_step
from synth.kg.relation_profile import RelationProfile, RelationProfiles, graph_overrides
from synth.schemas import Constraint, Step

SATURATED = 0.5
"""A closed-class set estimated at this share of the class or more could be any member."""
FINALS_KEPT = 20_000
"""Constraints whose final state is kept (a few MB)."""
STATES_KEPT = 2_000
"""Constraints whose every state is kept (construction scores one chain again per cue it adds)."""
WORLD_ENTITIES = 1_000_000
"""The size of world the default `scale` imagines: a graph of 14,000 entities is 1/70 of it."""


class WorldConfig(FrozenConfig):
    enabled: bool = Field(default=True, description="Reject questions with more than max_answers in a bigger world.")
    scale: float | None = Field(
        default=None,
        gt=1,
        description="How many times larger than the graph the world is (N): a many-valued step reaches N times as "
        "many entities there; default: 1,000,000 / the graph's entities, between 10 and 1,000.",
    )
    max_answers: float = Field(
        default=1.0, ge=1, description="Most answers a question may have in that world (world_ambiguous above)."
    )
    bounded_mean: float = Field(
        default=1.5, ge=1, description="A step is world-bounded when its entities have at most this many values ..."
    )
    bounded_p90: float = Field(default=2.0, ge=1, description="... on average, and 90% have at most this many.")
    narrowing: float = Field(
        default=4.0,
        ge=1,
        description="Constraints (or facts) taken as independent narrow the smallest of them by at most this "
        "factor: clues that look independent rarely are (films a producer made are mostly of his genres), so a "
        "unique answer needs one clue that alone leaves a handful of candidates.",
    )
    closed_narrowing: float = Field(
        default=1.0,
        ge=1,
        description="`narrowing` where the answer is a member of a closed class (a time zone, a country, a "
        "language): clues there go together, not independently (a North American birthplace and a time zone of "
        "Canada), so a chain that reaches several members is not made unique by another clue. Readers found a "
        "second answer in such items (docs/audit.md, round 11).",
    )
    partial_mean: float = Field(
        default=1.1,
        ge=1,
        description="A bounded step whose holders have at least this many values on average is listed in part "
        "(several citizenships): where the graph lists one value, the world is taken to hold that many.",
    )
    hub_share: float = Field(
        default=0.05,
        gt=0,
        le=1,
        description="A cue is a hub (never used) when its value is shared by more than this share of the entities "
        "that have the relation ...",
    )
    hub_min: int = Field(default=20, ge=1, description="... and by more than this many.")
    closed_growth: float = Field(
        default=2.0,
        ge=1,
        description="A closed class (countries, languages, ethnic groups, time zones, genres, ...) has this many times "
        "the members the graph lists, whatever the world's scale: it does not grow with the world.",
    )
    loose_share: float = Field(
        default=0.2,
        gt=0,
        le=1,
        description="A chain set that holds this share of its universe in the world (any state where a film's "
        "composer died) narrows nothing: the hops before it are not counted in the effective hops, and a whole chain "
        "that loose leaves the answer to its cues (synth.kg.shortcuts). Readers found a second answer in 13 of 33 "
        "rated 5-6 hop items of rounds 23-27 with such a set after the second hop, 8 of 57 without (docs/audit.md, "
        "round 28).",
    )
    read_containers: bool = Field(
        default=True,
        description="A many-valued step from a place reaches, in the world, what it reaches from the places "
        "containing it too: a reader takes 'a film shot in Manhattan' for one shot in New York City, where the "
        "graph lists 230 films (Manhattan: 2).",
    )
    audit_flags: bool = Field(
        default=True,
        description="Stop using relations the store's audits keep catching out (rated items resting on a wrong "
        "fact): at least flagged_min such items, flagged_share of those rated.",
    )
    flagged_share: float = Field(default=0.25, gt=0, le=1, description="See audit_flags.")
    flagged_min: int = Field(default=3, ge=1, description="See audit_flags.")
    relation_overrides: Path | None = Field(
        default=None,
        description="A YAML file of relation id -> {trusted, transitive, closed, world_values, world_values_of, "
        "wrong_facts, not_of, soft, reason}; default: the "
        "graph's own relation_overrides.yaml where it has one (synth.kg.relation_profile).",
    )
    rival_share: float = Field(
        default=0.1,
        ge=0,
        description="The graph's other candidates of a question's smallest clue may be answers a reader adds: "
        "rejected (known_rivals) when the chances that they also fit the other clues, as many values as they have "
        "in the graph, sum above this (WorldModel.rivals). Readers' second answers follow it (docs/audit.md).",
    )
    works_listed: float = Field(
        default=4.0,
        ge=1,
        description="An open-class entity's values (a person's credits) in the world per value the graph lists: "
        "Joel Coen directed 10 of his 19 films in FB15k-237, Marshall Herskovitz produced 2 of about 10 "
        "(WorldModel.rivals).",
    )
    contradiction_share: float = Field(
        default=0.02,
        ge=0,
        le=1,
        description="A single fact whose entity's type contradicts its relation is dropped where at most this share "
        "of the relation's typed facts do (EastEnders 'was made in' London); self-loops always; 0 drops self-loops "
        "only (synth.kg.contradictions).",
    )
    described_countries: bool = Field(
        default=True,
        description="Never state a work's or a person's country that its own description contradicts ('a 1996 "
        "Australian film' listed as made in New Zealand; co-producing countries), while still counting it for "
        "answers: synth.kg.described_countries.",
    )
    unstated_facts: bool = Field(
        default=True,
        description="Count, but never state in a question, country facts a reader would not write: a work's country "
        "where its lead names no nationality, a country that is part of another (a citizen of Scotland), and a "
        "person's place that is a whole country (born in England): synth.kg.unstated.",
    )


RIVALS_WEIGHED = 50
"""The smallest part's other candidates `rivals` weighs (more already make the question ambiguous)."""
CREDITED_SOURCES = 5
"""A part's last step starts from at most this many members for `rivals` to look for co-workers there."""
CREDITED_LEAST = 0.05
"""Co-workers credited in a role that comes with the asked one less often than this are left out."""


@dataclass(frozen=True)
class SetState:
    """A constraint followed part of the way: the graph's frontier, and the world estimates."""

    frontier: np.ndarray
    size: float
    universe: float
    reading: np.ndarray
    """The graph's entities that fit as the world reads the steps: a containment step reaches every
    level (Akron's containers: Summit County, Ohio, the United States), not the one level listed."""
    saturated: bool = False
    """The set is most of a closed class in the world (it could be any time zone): it narrows nothing."""
    closed: bool = False
    """The set lies in a closed class (time zones, countries, languages): clues there narrow it little."""

    @property
    def sizes(self) -> tuple[float, float]:
        return self.size, self.universe


@dataclass(frozen=True)
class StepStatistics:
    """Values per entity of one relation in one direction, over the entities that have it."""

    entities: int
    mean: float
    p90: float
    largest: int


def default_scale(kg: KnowledgeGraph) -> float:
    """How many times larger than the graph the world is taken to be (WORLD_ENTITIES entities)."""
    return round(min(1000.0, max(10.0, WORLD_ENTITIES / max(1, kg.num_nodes))), 1)


class WorldModel:
    """The graph's relations as a bigger world would have them (see the module docstring)."""

    def __init__(self, kg: KnowledgeGraph, config: WorldConfig = WorldConfig(), flags=None):
        """`flags`: what the store's audits said of the graph's relations (synth.audit.flags)."""
        self.kg = kg
        self.config = config
        self.scale = config.scale or default_scale(kg)
        self._hubs: dict[tuple[str, str, str], bool] = {}
        self._cue_sizes: dict[tuple[str, str, str], tuple[float, float]] = {}
        self._finals: dict[tuple, SetState] = {}
        self._states: dict[tuple, list[SetState]] = {}
        self._unlisted_values: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._factors: dict[tuple[str, str], float] = {}
        self._wider: dict[tuple, np.ndarray] = {}
        self.profiles = RelationProfiles(
            kg,
            overrides=graph_overrides(kg, config.relation_overrides),
            closed_growth=config.closed_growth,
            flags=flags if config.audit_flags else None,
            flagged_share=config.flagged_share,
            flagged_min=config.flagged_min,
        )
        self.containment = Containment(kg, self.profiles, self.statistics)
        self.cocredits = CoCredits(kg)

    @cached_property
    def _statistics(self) -> dict[tuple[str, str], StepStatistics]:
        found = {}
        for direction in (FORWARD, INVERSE):
            index = self.kg.index(direction)
            values = np.diff(index.run_start)
            for relation in np.unique(index.run_rel).tolist():
                counts = values[index.run_rel == relation]
                found[(self.kg.relation_ids[relation], direction)] = StepStatistics(
                    entities=len(counts),
                    mean=float(counts.mean()),
                    p90=float(np.quantile(counts, 0.9)),
                    largest=int(counts.max()),
                )
        return found

    def statistics(self, relation: str, direction: str) -> StepStatistics | None:
        return self._statistics.get((relation, direction))

    @cached_property
    def untrusted(self) -> frozenset[str]:
        """Relations a reader does not trust in either direction (synth.kg.relation_profile): never a hop,
        a fact or a cue."""
        return frozenset(
            relation
            for relation in self.kg.relation_ids
            if not (self.profiles(relation, FORWARD).trusted and self.profiles(relation, INVERSE).trusted)
        )

    @cached_property
    def soft(self) -> frozenset[str]:
        """Relations no reader can rule anyone out of (synth.kg.relation_profile): never the step into
        an answer nor a cue on one."""
        return frozenset(relation for relation in self.kg.relation_ids if self.profiles(relation, FORWARD).soft)

    def bounded(self, relation: str, direction: str) -> bool:
        """Whether stepping over `relation` in `direction` reaches few entities in any world."""
        found = self.statistics(relation, direction)
        return found is not None and found.mean <= self.config.bounded_mean and found.p90 <= self.config.bounded_p90

    def factor(self, relation: str, direction: str) -> float:
        """How many times more entities the step reaches in the world than in the graph: `scale` for a
        many-valued step; for a bounded one its mean values per holder where that is well above one
        (several citizenships, a film's producers, a city's teams: where the graph lists one value,
        the world often holds more), or the override's `world_values` (a country's capitals), else one.
        Kept per step: the estimate asks for it at every step of every candidate."""
        key = (relation, direction)
        found = self._factors.get(key)
        if found is None:
            found = self._factors[key] = self._factor(relation, direction)
        return found

    def _factor(self, relation: str, direction: str) -> float:
        if not self.bounded(relation, direction):
            return self.scale
        found = self.statistics(relation, direction)
        listed = found.mean if found is not None and found.mean >= self.config.partial_mean else 1.0
        return max(listed, self.profiles(relation, direction).world_values)

    def unlisted(self, frontier: np.ndarray, profile: RelationProfile) -> float:
        """Values the holders in `frontier` have in the world beyond those the graph lists, for the
        holders an override names (`world_values_of`: France's time zones beyond Central European Time)."""
        if not profile.world_values_of:
            return 0.0
        nodes, extra = self._unlisted(profile)
        return float(extra[np.isin(nodes, frontier, assume_unique=True)].sum()) if len(nodes) else 0.0

    def _unlisted(self, profile: RelationProfile) -> tuple[np.ndarray, np.ndarray]:
        """(node numbers, values beyond the graph's) of the holders an override names, in the graph."""
        key = (profile.relation, profile.direction)
        if key not in self._unlisted_values:
            pairs = []
            for head, count in profile.world_values_of:
                node = self.kg.node_index.get(head)
                if node is not None:
                    listed = len(self.kg.step_nodes(np.array([node], dtype=np.int32), *key))
                    pairs.append((node, max(0.0, count - listed)))
            nodes = np.array([node for node, _ in pairs], dtype=np.int32)
            self._unlisted_values[key] = (nodes, np.array([extra for _, extra in pairs], dtype=float))
        return self._unlisted_values[key]

    def hub(self, anchor: str, relation: str, direction: str) -> bool:
        """Whether the fact "reached from `anchor` over `relation` in `direction`" is shared by so many
        of the entities that have the relation that it says almost nothing about one of them."""
        key = (anchor, relation, direction)
        if key not in self._hubs:
            matches = len(self.kg.fact_nodes(anchor, relation, direction))
            reverse = INVERSE if direction == FORWARD else FORWARD
            found = self.statistics(relation, reverse)  # the entities that have the relation at all
            self._hubs[key] = (
                found is not None and matches > self.config.hub_min and matches > self.config.hub_share * found.entities
            )
        return self._hubs[key]

    def reachable_from_class(self, class_size: float, step: Step) -> float:
        """The most entities a bounded step reaches in the world from a closed class of `class_size`
        members: each member's values, as many as the graph lists per holder or the world adds
        (`factor`). The capitals countries have had are a few hundred, not every city that is a
        capital in the graph `scale` times over, so a fact on them ("a capital that was a filming
        location of Spy Game") is not taken to narrow them to one."""
        found = self.statistics(step.relation, step.direction)
        values = max(found.mean if found is not None else 1.0, self.factor(step.relation, step.direction), 1.0)
        return class_size * values

    def universe(self, relation: str, direction: str) -> float:
        """How many entities in the world a step over `relation` in `direction` could reach: those
        that have the relation on that side in the graph, `scale` times over."""
        found = self.statistics(relation, INVERSE if direction == FORWARD else FORWARD)
        return (found.entities if found is not None else 1) * self.scale

    def cue_size(self, anchor: str, relation: str, direction: str) -> tuple[float, float]:
        """`set_size` of the one-step constraint from `anchor` (cached: construction scores the same cue
        for many candidates)."""
        key = (anchor, relation, direction)
        if key not in self._cue_sizes:
            self._cue_sizes[key] = self.set_size(
                Constraint(anchor=anchor, steps=[Step(relation=relation, direction=direction)])  # pyright: ignore[reportArgumentType]
            )
        return self._cue_sizes[key]

    def set_size(self, constraint: Constraint) -> tuple[float, float]:
        """(estimated world size of the constraint's set, world size of the universe it lies in).
        Each step grows the set by the graph's fan-out from its frontier, `scale` times more where the
        step is many-valued; a fact narrows it to at most the fact's own world set, and to the share
        of the universe that has the fact (facts taken as independent); the world set is never
        smaller than the graph's."""
        return self.states(constraint)[-1].sizes

    def states(self, constraint: Constraint) -> list["SetState"]:
        """The state after each step (the anchor first): what `extend` continues from (cached; the
        caller must not change the list)."""
        key = _constraint_key(constraint)
        found = self._states.get(key)
        if found is None:
            if len(self._states) >= STATES_KEPT:
                self._states.clear()
            found = self._states[key] = self._walk_states(constraint)
        return found

    def _walk_states(self, constraint: Constraint) -> list["SetState"]:
        node = self.kg.node_index.get(constraint.anchor)
        start = np.array([] if node is None else [node], dtype=np.int32)
        states = [SetState(start, 1.0, 1.0, start)]
        for step in constraint.steps:
            states.append(self.extend(states[-1], [step]))
        return states

    def extend(self, state: "SetState", steps) -> "SetState":
        """Each step grows the set by the graph's fan-out (over the transitive closure for containment),
        `scale` times more where many-valued, capped by a closed class's size. Facts narrow it to at
        most their own world set and, taken as independent, to their share of the step's universe;
        facts over the relation of the step or of an earlier fact go together (a journalist who is a
        poet and a professor) and narrow it only to the smallest of them, never by their product. (The
        graph's own joint count says little here: the answer was chosen for having the facts.)"""
        frontier, size, universe, reading = state.frontier, state.size, state.universe, state.reading
        source_closed = state.closed and len(state.frontier) > 0  # the anchor's own state is no class
        universe_before = state.universe
        for step in steps:
            profile = self.profiles(step.relation, step.direction)
            reached = self.kg.step_nodes(frontier, step.relation, step.direction)
            if reading is frontier and self.containment.literal(step.relation, step.direction, profile.transitive):
                reading = reached  # the world reads this step as the graph lists it: one lookup
            else:
                reading = self.containment.reach(reading, step.relation, step.direction, profile.transitive)
            grown = (len(reading) if profile.transitive else len(reached)) + self.unlisted(frontier, profile)
            if (
                self.config.read_containers
                and not profile.transitive
                and not self.bounded(step.relation, step.direction)
            ):
                grown = max(grown, self._from_containers(frontier, step))
            size *= grown / max(1, len(frontier)) * self.factor(step.relation, step.direction)
            if profile.closed:
                size = min(size, profile.class_size)
            universe = profile.class_size if profile.closed else self.universe(step.relation, step.direction)
            if source_closed and not profile.closed and self.bounded(step.relation, step.direction):
                universe = min(universe, self.reachable_from_class(universe_before, step))
            alike = {(step.relation, step.direction)}  # facts over one relation go together
            smallest = size  # the smallest set a fact or the step gives alone
            for fact in step.where:
                fact_profile = self.profiles(fact.relation, fact.direction)
                holders = self.kg.fact_nodes(fact.anchor, fact.relation, fact.direction)
                literal = self.containment.literal(fact.relation, fact.direction, fact_profile.transitive)
                read = (
                    holders
                    if literal
                    else self._holders(fact.anchor, fact.relation, fact.direction, fact_profile.transitive)
                )
                same = reading is reached
                reached = intersect(reached, holders)
                reading = reached if same and literal else intersect(reading, read)
                shared = len(read) * self.factor(fact.relation, fact.direction)
                if fact_profile.closed:
                    shared = min(shared, fact_profile.class_size)
                smallest = min(smallest, shared)
                if (fact.relation, fact.direction) in alike:  # a journalist who is also a poet: no product
                    size = min(size, shared)
                else:
                    size = min(size, shared, size * shared / universe)
                    alike.add((fact.relation, fact.direction))
            if step.where:  # independence is trusted to narrow the smallest set only so far
                size = max(size, smallest / self.narrowing(profile.closed))
            size = max(size, float(len(reached)), float(len(reading)))
            frontier = reached
            source_closed, universe_before = profile.closed, universe
            saturated = profile.closed and size >= SATURATED * profile.class_size
        closed = profile.closed if steps else state.closed
        return SetState(frontier, size, universe, reading, saturated if steps else state.saturated, closed)

    def _from_containers(self, frontier: np.ndarray, step: Step) -> int:
        """The entities a many-valued step reaches from the frontier's places and every place containing
        them: a reader takes "a film shot in Manhattan" for one shot in New York City (kept for small
        frontiers: construction asks for the same steps again and again)."""

        def reached() -> np.ndarray:
            containers = self.containment.containers(frontier)
            if not len(containers):
                return containers
            return self.kg.step_nodes(np.union1d(frontier, containers), step.relation, step.direction)

        return len(kept_step(self._wider, frontier, (step.relation, step.direction), reached))

    def _holders(self, anchor: str, relation: str, direction: str, transitive: bool) -> np.ndarray:
        """The entities that have the fact (stepping from `anchor` reaches them), every level of a containment."""
        node = self.kg.node_index.get(anchor)
        if node is None:
            return np.zeros(0, dtype=np.int32)
        return self.containment.reach(np.array([node], dtype=np.int32), relation, direction, transitive)

    def rivals(self, constraints: list[Constraint], answer: str) -> float:
        """The answers a reader would add, summed as chances. The smallest part's other candidates:
        the graph's (the other composer of Batman Begins) and those credited in another role on the
        entities its last step starts from (Joel Coen, an editor of The Ladykillers, for its
        producers: synth.kg.cocredits). Each is weighed by the chance that it is in every other
        part's set in the world, where the graph lists only some values: for a part whose last step
        comes from a set holding share f of its universe, a candidate with k values back over that
        step (k times as many as the world gives it: `values_grown`) is in it with chance
        1 - (1 - f)^k (James Newton Howard, with dozens of scores, has scored some film about a
        sport), or more where it is credited in another role on one of that set's members.
        Readers' second answers follow this figure (docs/audit.md, rounds 5-7)."""
        answer_node = self.kg.node_index.get(answer)
        paths = [self.states(constraint) for constraint in constraints]
        order = sorted(range(len(paths)), key=lambda part: paths[part][-1].size)
        smallest, others = order[0], order[1:]
        pool = self._candidates(paths[smallest], constraints[smallest])
        if answer_node is not None:
            pool.pop(answer_node, None)
        reached = {part: set(paths[part][-1].frontier.tolist()) for part in others}
        expected = 0.0
        for node, chance in sorted(pool.items(), key=lambda item: -item[1])[:RIVALS_WEIGHED]:
            for part in others:
                if node not in reached[part]:  # in that set in the graph already: chance 1
                    chance *= self._fits(node, paths[part], constraints[part])
            expected += chance
        return expected

    def _candidates(self, states: list[SetState], constraint: Constraint) -> dict[int, float]:
        """A part's candidates with their chance of being in its world set: the graph's (1), those
        credited in another role on the members its last step starts from (a few only), and those the
        graph lists at a place inside one of those members (1: see `_other_level`)."""
        pool: dict[int, float] = {}
        before, last = states[-2].frontier, constraint.steps[-1]
        if 0 < len(before) <= CREDITED_SOURCES:
            pool = self.cocredits.candidates(before, last.relation, last.direction, CREDITED_LEAST)
            if self.config.read_containers and not self.profiles(last.relation, last.direction).transitive:
                inside = self.containment.contents(before)
                pool.update(dict.fromkeys(self.kg.step_nodes(inside, last.relation, last.direction).tolist(), 1.0))
        pool.update(dict.fromkeys(states[-1].frontier.tolist(), 1.0))
        return pool

    def values_grown(self, last: Step) -> float:
        """How many values back over `last` the world gives a candidate per value the graph lists: a
        closed class's member gains holders as the world grows (English has `scale` times the
        speakers), an open one's works do not (a composer scores no more films in a bigger world),
        but the graph lists them in part (`works_listed`)."""
        back = INVERSE if last.direction == FORWARD else FORWARD
        grown = self.factor(last.relation, back)
        return grown if self.profiles(last.relation, last.direction).closed else min(grown, self.config.works_listed)

    def _fits(self, node: int, states: list[SetState], constraint: Constraint) -> float:
        """The chance that `node`, not in the part's set in the graph, is in it in the world (see `rivals`)."""
        last = constraint.steps[-1]
        back = INVERSE if last.direction == FORWARD else FORWARD
        before = states[-2]
        share = before.size / before.universe if len(states) > 2 else 1 / self.universe(last.relation, back)
        values = len(self.kg.step_nodes(np.array([node], dtype=np.int32), last.relation, back))
        values = max(1.0, values * self.values_grown(last))
        listed = 1 - (1 - min(1.0, share)) ** values
        credited = self.cocredits.chance(node, before.frontier, last.relation, last.direction)
        level = self._other_level(node, before.frontier, last) if self.config.read_containers else 0.0
        return 1 - (1 - listed) * (1 - credited) * (1 - level)

    def _other_level(self, node: int, places: np.ndarray, last: Step) -> float:
        """The chance that `node`, reaching none of `places` over `last` back, reaches one of them in the
        world because the graph lists it at another level: certain where it lists a place inside one
        (died in Manhattan, asked "died in New York City"); where it lists a place containing one (died
        in New York City, asked "died in Manhattan": Herbert Ross, a second answer readers found), the
        share of that container's holders listed further down that are in the asked place (all ten
        listed below New York City died in Manhattan)."""
        if not 0 < len(places) <= CREDITED_SOURCES or self.profiles(last.relation, last.direction).transitive:
            return 0.0
        back = INVERSE if last.direction == FORWARD else FORWARD
        values = self.kg.step_nodes(np.array([node], dtype=np.int32), last.relation, back)
        if not len(values):
            return 0.0
        if np.isin(self.containment.containers(values), places).any():
            return 1.0
        chance = 0.0
        for place in places.tolist():
            here = np.array([place], dtype=np.int32)
            wider = np.intersect1d(values, self.containment.containers(here))
            if not len(wider):
                continue
            asked = len(
                self.kg.step_nodes(np.union1d(here, self.containment.contents(here)), last.relation, last.direction)
            )
            for container in wider.tolist():
                below = self.containment.contents(np.array([container], dtype=np.int32))
                listed_below = len(self.kg.step_nodes(below, last.relation, last.direction))
                if listed_below:
                    chance = max(chance, min(1.0, asked / listed_below))
        return chance

    def answers(self, constraints: list[Constraint], graph_answers: int = 1) -> float:
        """Estimated answers in the world of a question whose constraints the graph answers with
        `graph_answers` entities: never fewer than the graph's entities that fit every constraint as
        the world reads them (every level of a containment)."""
        return self.answers_of([self.final_state(constraint) for constraint in constraints], graph_answers)

    def final_state(self, constraint: Constraint) -> "SetState":
        """The constraint's state after its last step (cached: construction re-checks the same
        constraints as it adds and drops cues)."""
        key = _constraint_key(constraint)
        found = self._finals.get(key)
        if found is None:
            if len(self._finals) >= FINALS_KEPT:
                self._finals.clear()
            found = self._finals[key] = self.states(constraint)[-1]
        return found

    def answers_of(self, finals: list["SetState"], graph_answers: int = 1) -> float:
        """`answers` from the constraints' final states (a caller that combines them several ways keeps them)."""
        # the graph's answers as the world reads the steps; a constraint that reaches a closed class and
        # could be any of its members ("a time zone of some film's cinematographer's birthplace")
        # narrows nothing there, so the others' intersection in the graph is what the world holds
        narrowing = [state for state in finals if not state.saturated] or finals[:1]
        reading = narrowing[0].reading
        for state in narrowing[1:]:
            reading = np.intersect1d(reading, state.reading, assume_unique=True)
        closed = any(state.closed for state in finals)
        return max(self.combine([state.sizes for state in finals], graph_answers, closed), float(len(reading)))

    def narrowing(self, closed: bool) -> float:
        """How far clues taken as independent may narrow the smallest set: `closed_narrowing` in a closed class."""
        return self.config.closed_narrowing if closed else self.config.narrowing

    def combine(self, sizes: list[tuple[float, float]], graph_answers: int = 1, closed: bool = False) -> float:
        """The intersection of sets of these (world size, universe) estimates: at most the smallest,
        and as large as their sizes make it in their common universe if they are independent, but
        never below the smallest narrowed by `narrowing` (`closed_narrowing` where the sets lie in a
        closed class); never fewer than the graph's answers."""
        smallest = min(size for size, _ in sizes)
        joint = math.prod(size for size, _ in sizes) / min(universe for _, universe in sizes) ** (len(sizes) - 1)
        trusted = smallest / self.narrowing(closed) if len(sizes) > 1 else smallest
        return max(float(graph_answers), min(smallest, max(joint, trusted)))

    def combiner(self, sizes: list[tuple[float, float]], closed: bool = False):
        """`combine(sizes + [extra], graph_answers, closed)` as a function of (extra, graph_answers), the
        figures of `sizes` computed once: construction scores every cue of an answer against one chain."""
        smallest, product = min(size for size, _ in sizes), math.prod(size for size, _ in sizes)
        universe, narrowing, count = min(universe for _, universe in sizes), self.narrowing(closed), len(sizes)

        def combined(extra: tuple[float, float], graph_answers: int) -> float:
            size, extra_universe = extra
            least = min(smallest, size)
            joint = product * size / min(universe, extra_universe) ** count
            return max(float(graph_answers), min(least, max(joint, least / narrowing)))

        return combined

    def floor(self, last: Step, cue_sizes: list[float]) -> float:
        """The fewest answers any question ending in step `last` can reach in the world, whatever facts
        and cues construction adds, when `cue_sizes` are the world sizes of every cue the answer could
        get: the chain reaches at least one entity `factor` times over (capped by a closed class), no
        fact narrows the last step (facts describe intermediates), and `combine` never narrows the
        smallest part by more than `narrowing`. A walk whose floor is above `max_answers` cannot
        make a question, so construction is spared."""
        profile = self.profiles(last.relation, last.direction)
        chain = self.factor(last.relation, last.direction)
        if profile.closed:
            chain = min(chain, profile.class_size)
        smallest = min([chain, *cue_sizes])
        return smallest / self.narrowing(profile.closed) if cue_sizes else smallest

    def bounded_steps(self, constraint: Constraint) -> list[bool]:
        """Per step: whether it is world-bounded (what the item records, and tests re-derive)."""
        return [self.bounded(step.relation, step.direction) for step in constraint.steps]


def _constraint_key(constraint: Constraint) -> tuple:
    """What a constraint's states depend on (cheaper to build and hash than its JSON)."""
    return (
        constraint.anchor,
        tuple(
            (step.relation, step.direction, tuple((fact.anchor, fact.relation, fact.direction) for fact in step.where))
            for step in constraint.steps
        ),
    )


def deciding_part(
    kg: KnowledgeGraph, constraints: list[Constraint], answer: str, world: WorldModel | None = None
) -> str | None:
    """What alone decides a multi-part question's answer (the rest is then decoration), or None: a
    fact that one entity has (it names an intermediate, so the hops before it are not needed), a
    constraint that alone reaches only the answer, or the answer's cues without the chain. A part
    decides only if it is also world-unique, where the world is modelled."""

    def world_unique(parts: list[Constraint]) -> bool:
        return world is None or world.answers(parts) <= world.config.max_answers

    chain, *cues = constraints
    facts = [fact for step in chain.steps for fact in step.where]
    if not cues and not facts:
        return None
    for fact in facts:
        if len(kg.fact_nodes(fact.anchor, fact.relation, fact.direction)) == 1:
            return f"the fact from {fact.anchor} names an intermediate"
    for constraint in ([chain] if cues else []) + cues:
        if len(kg.matching([constraint])) == 1 and world_unique([constraint]):
            return f"the cue from {constraint.anchor} alone singles out the answer"
    if cues and world_unique(cues) and kg.ids(kg.matching(cues)) == {answer}:
        return "the answer's cues single it out without the chain: its hops are decoration"
    return None


def hub_cues(world: WorldModel, constraints: list[Constraint]) -> list[str]:
    """The hub facts a question uses: a constraint's first step from its named anchor, or a fact."""
    found = []
    for constraint in constraints:
        first = constraint.steps[0]
        if world.hub(constraint.anchor, first.relation, first.direction):
            found.append(f"{constraint.anchor} {first.relation} ({first.direction})")
        for step in constraint.steps:
            found += [
                f"{fact.anchor} {fact.relation} ({fact.direction})"
                for fact in step.where
                if world.hub(fact.anchor, fact.relation, fact.direction)
            ]
    return found

"""The multihop item generator: walk the graph, construct unique cues in reverse, verbalize.

Spec: the number of hops of the chain. Output items carry the chain as their construction path,
every cue (constraints, and facts describing intermediates) with its candidate count, and the
corpus passage stating each edge: chain edges on the path, cue and fact edges in `cue_edges`.
"""

import math
import random
from collections import Counter
from typing import Literal

from synth.generators.base import Generator, Rejection
from synth.generators.kg_walk import RandomWalker, Walk, WalkConfig
from synth.generators.reverse import ConstructConfig, ReverseConstructor
from synth.generators.templates import TemplateVerbalizer
from synth.hashing import content_hash
from synth.kg.city_parts import city_part_ids
from synth.kg.display import namesakes_of
from synth.kg.graph import KnowledgeGraph
from synth.kg.multiplicity import WorldConfig, WorldModel, deciding_part
from synth.kg.shortcuts import LONG_CHAIN, effective_hops
from synth.kg.types import AnswerKind
from synth.kg.unstated import country_part_ids
from synth.schemas import Cue, Item, Provenance
from synth.search.corpus import KGCorpus

RECIPE = "multihop"
Style = Literal["plain", "obfuscated"]


ANSWER_CAP_MIN = 5
"""The per-answer cap never goes below this many items, however small the run (a small graph has few answers)."""
GIVE_UP_AFTER = 20
"""Walks ending on one answer that found no cues singling it out in the world, per walk that did, before
no walk ends there again. Random walks end on hubs (association football, the United States) hundreds
of times, and each was walked, estimated and constructed in vain; on 300 plain items of the bundled
graph, giving up after 20 lost 2% of the constructions that passed the estimate and spared 28% of the
construction time."""
GIVE_UP_TAIL_AFTER = 5
"""The same for a chain's last two hops (the world estimate grows most over them): walks ending on a
tail that failed this many times per success are dropped before construction. On 1,000 plain items
of the bundled graph this spared a quarter of the constructions and lost 1.5% of those that passed.
Chains of `LONG_CHAIN` hops or more neither count nor are given up: nearly all of them fail, and
giving up on their ends left a 5-6 hop run of seed 6 with 1 item of 12 instead of 3."""


class MultihopGenerator(Generator):
    name = "multihop"

    def __init__(
        self,
        kg: KnowledgeGraph,
        walk: WalkConfig,
        construct: ConstructConfig,
        seed: int,
        evidence: KGCorpus | None = None,
        style: Style = "plain",
        world: WorldConfig = WorldConfig(),
        max_words: int | None = None,
        min_words: int = 1,
        flags=None,
        items: int | None = None,
        stated: KnowledgeGraph | None = None,
    ):
        """`evidence`: the corpus whose passages items cite; the corpus of the full snapshot when
        `kg` is a view without some relations, so ids match what `synth search` serves.
        `style`: plain (named anchor, compact chain) or obfuscated (the anchor and every
        intermediate described by facts of their own; WebShaper- and BrowseComp-like).
        `world`: how answers must stay unique in a world larger than the graph.
        `max_words`, `min_words`: the longest and shortest question the format check takes; a
        phrasing outside is rejected here, by name, never left for the check to drop.
        `flags`: what the store's audits said of the graph's relations (synth.audit.flags).
        `items`: how many items the run wants, for the per-answer cap (`reverse.max_answer_share`).
        `stated`: `kg` less the facts a question counts but never states (synth.kg.unstated): walks and
        cues come from it, answers are counted in `kg`."""
        stated = stated if stated is not None else kg
        self.kg = kg
        self.max_words, self.min_words = max_words, min_words
        self.seed = seed
        self.style = style
        if style == "obfuscated":
            construct = construct.model_copy(
                update={"describe_intermediates": 8, "minimal_cues": True, "min_cue_candidates": 2}
            )
        self.construct = construct
        self.answer_cap = (
            max(ANSWER_CAP_MIN, math.ceil(construct.max_answer_share * items))
            if items is not None and construct.max_answer_share < 1
            else None
        )
        self.answered: Counter[str] = Counter()
        """Items constructed per answer entity in this run."""
        self.failed: Counter[str | tuple[str, ...]] = Counter()
        """Walks per answer, and per chain tail, whose cues could not single the answer out in the world."""
        self.singled_out: Counter[str | tuple[str, ...]] = Counter()
        """Walks per answer, and per chain tail, whose cues singled the answer out in the world."""
        # Literal values (years, ratings, tags) are cues about the answer, never stepped through.
        self.world = WorldModel(kg, world, flags) if world.enabled else None
        untrusted = self.world.untrusted if self.world is not None else frozenset()
        self.walker = RandomWalker(
            stated.without_relations([*kg.literal_relations, *untrusted]),
            walk,
            random.Random(seed),
            bounded=self.world.bounded if self.world is not None else None,
            soft=self.world.soft if self.world is not None else frozenset(),
        )
        self.verbalizer = TemplateVerbalizer(kg)
        self.country_parts = country_part_ids(kg, self.verbalizer.types)
        """Countries inside another (England in the United Kingdom): never an answer."""
        self.city_parts = city_part_ids(kg, self.verbalizer.types)
        """Places inside a better-known city (Hammersmith in London): never an answer either."""
        for part in self.country_parts | self.city_parts:
            self.walker.avoid_ending(part)
        names = Counter(entity.name for entity in kg.entities.values())
        self.shared_names = {name for name, count in names.items() if count > 1}
        """Names the graph gives to several entities ("Portland", "Mary"): a question never names one."""
        self.constructor = ReverseConstructor(
            kg,
            construct,
            random.Random(f"construct-{seed}"),
            world=self.world,
            avoid=self._unnameable,
            types=self.verbalizer.types,
            stated=stated,
        )
        self.corpus = evidence or KGCorpus(kg)

    def _unnameable(self, entity: str) -> bool:
        """An entity a question may not name: two things in one node, or a name several entities share."""
        types = self.verbalizer.types
        return (
            self.kg.name(entity) in self.shared_names
            or types.conflicted(entity)
            or namesakes_of(types).unnameable(entity)
        )

    def _not_singled_out(self, walk: Walk) -> None:
        """The walk's cues did not single its answer out: an answer failing `GIVE_UP_AFTER` times per
        success makes walks end elsewhere, a tail failing `GIVE_UP_TAIL_AFTER` times is given up."""
        if len(walk.hops) >= LONG_CHAIN:  # nearly every long chain fails: its failures say little of its end
            return
        answer, tail = walk.entities[-1], walk.entities[-3:]
        self.failed[answer] += 1
        self.failed[tail] += 1
        if self.failed[answer] >= GIVE_UP_AFTER * (1 + self.singled_out[answer]):
            self.walker.avoid_ending(answer)

    def _given_up_tail(self, walk: Walk) -> bool:
        """Whether the walk's last two hops failed `GIVE_UP_TAIL_AFTER` times per success (short chains)."""
        if len(walk.hops) >= LONG_CHAIN:
            return False
        tail = walk.entities[-3:]
        return self.failed[tail] >= GIVE_UP_TAIL_AFTER * (1 + self.singled_out[tail])

    def _type_nonsense(self, construction) -> Rejection | None:
        """A question through a node that stands for two things (names used as ids), or about an answer
        nothing says the kind of ("Earth" as what "has the administrative subdivision"), makes no sense."""
        types = self.verbalizer.types
        involved = [*construction.walk.entities, *(name for c in construction.constraints for name in c.named)]
        merged = next((entity for entity in involved if types.conflicted(entity)), None)
        if merged is not None:
            return Rejection("types", "incompatible_roles", f"{merged} is two kinds of thing in the graph")
        if not types.votes(construction.answer):
            return Rejection("types", "untyped_answer", f"nothing in the graph says what {construction.answer} is")
        return None

    def attempt(self, spec: int) -> Item | Rejection:
        walked = spec - 1 if self.style == "obfuscated" and spec > 1 else spec
        walk = self.walker.chain(walked)
        if walk is None or len(walk.hops) < walked:
            return Rejection("walk", "dead_end", f"no {walked}-hop walk from the drawn seed")
        if walked < spec:
            walk = self.constructor.obscure_anchor(walk)
            if walk is None:
                return Rejection("walk", "anchor_not_describable", "the anchor has no fact shared with another entity")
        if self.world is not None:
            first = walk.hops[0]
            if self.world.hub(walk.entities[0], first.relation, first.direction):
                return Rejection("walk", "hub_cue", f"the first step from {walk.entities[0]} is shared by too many")
        if self.kg.name(walk.entities[0]) in self.shared_names:
            return Rejection(
                "walk", "ambiguous_name", f"{self.kg.name(walk.entities[0])} names several entities in the graph"
            )
        if namesakes_of(self.verbalizer.types).unnameable(walk.entities[0]):
            return Rejection(
                "walk",
                "ambiguous_name",
                f"{self.kg.name(walk.entities[0])} names several people in the world and no profession tells which",
            )
        if self.constructor.anchor_overlap(walk):
            return Rejection(
                "walk",
                "anchor_names_hidden_entity",
                f"anchor {walk.entities[0]} shares words with a hidden entity's name",
            )
        answer = walk.entities[-1]
        if self.world is not None and walk.hops[-1].relation in self.world.soft:  # the longest policy ends anyhow
            return Rejection(
                "walk", "soft_last_step", f"no reader can rule anyone out of {walk.hops[-1].relation} into the answer"
            )
        if answer in self.country_parts:
            return Rejection(
                "walk",
                "country_part_answer",
                f"{self.kg.name(answer)} lies in a country the graph lists: a place clue that fits it fits that too",
            )
        if answer in self.city_parts:
            return Rejection(
                "walk",
                "city_part_answer",
                f"{self.kg.name(answer)} lies in a better-known city: a place clue that fits it fits the city a reader "
                "names",
            )
        if self.walker.no_end[self.walker.kg.node_index[answer]]:  # the longest policy ends where it can
            return Rejection("walk", "given_up_answer", f"{self.kg.name(answer)} was given up on or reached its cap")
        if self._given_up_tail(walk):
            return Rejection(
                "uniqueness",
                "given_up_tail",
                f"the chain's last hops to {self.kg.name(answer)} failed to single it out {GIVE_UP_TAIL_AFTER} times "
                "per success",
            )
        if self.answer_cap is not None and self.answered[answer] >= self.answer_cap:
            return Rejection(
                "walk",
                "frequent_answer",
                f"{self.kg.name(answer)} already answers {self.answer_cap} items (reverse.max_answer_share)",
            )
        if self.world is not None and (floor := self.constructor.world_floor(walk)) > self.world.config.max_answers:
            self._not_singled_out(walk)
            return Rejection(
                "uniqueness",
                "world_ambiguous",
                f"at least {floor:g} answers in a world {self.world.scale:g} times the graph, whatever the cues",
            )
        construction = self.constructor.construct(walk)
        if construction is None:
            self._not_singled_out(walk)
            return Rejection(
                "uniqueness", "not_unique", f"answer {walk.entities[-1]} not singled out by the graph's cues"
            )
        if self.world is not None and construction.world_answers > self.world.config.max_answers:
            self._not_singled_out(walk)
            return Rejection(
                "uniqueness",
                "world_ambiguous",
                f"about {construction.world_answers:g} answers in a world {self.world.scale:g} times the graph",
            )
        self.singled_out[answer] += 1
        self.singled_out[walk.entities[-3:]] += 1
        rivals = self.world.rivals(list(construction.constraints), construction.answer) if self.world else 0.0
        if self.world is not None and rivals > self.world.config.rival_share:
            return Rejection(
                "uniqueness",
                "known_rivals",
                f"the graph's other candidates of the smallest clue fit the rest with summed chance {rivals:.2f}",
            )
        if self.style == "obfuscated" and len(construction.constraints) == 1 and not construction.facts:
            # the chain from one named entity alone finds the answer: nothing to combine
            return Rejection(
                "uniqueness", "single_cue", f"the chain from {walk.entities[0]} alone singles out the answer"
            )
        deciding = deciding_part(self.kg, list(construction.constraints), construction.answer, self.world)
        if deciding is not None:
            return Rejection("uniqueness", "single_cue", deciding)
        kind = AnswerKind(self.verbalizer.types, construction.answer)
        shortcut = effective_hops(self.kg, self.world, list(construction.constraints), kind)
        chain_hops = len(walk.hops)
        if shortcut.hops < chain_hops - self.construct.hops_tolerance and (
            self.construct.below_tolerance == "reject" or (shortcut.cues_only and chain_hops >= LONG_CHAIN)
        ):
            return Rejection(
                "uniqueness", "shortcut_cue", f"{shortcut.label}: {shortcut.hops} of {chain_hops} hops needed"
            )
        nonsense = self._type_nonsense(construction)
        if nonsense is not None:
            return nonsense
        hidden = [name for entity in walk.entities[1:] for name in self.kg.names(entity)]
        question = self.verbalizer.question(construction.constraints, hidden, path=walk.entities)
        words = len(question.split())
        if self.max_words is not None and words > self.max_words:
            return Rejection("phrasing", "too_long_to_read", f"{words} words; the format check takes {self.max_words}")
        if words < self.min_words:
            return Rejection("phrasing", "too_short_to_read", f"{words} words; the format check takes {self.min_words}")
        evidence = {hop: self.corpus.evidence_id(hop.head, hop.relation, hop.tail) for hop in construction.edges}
        path = [hop.model_copy(update={"evidence_doc_id": evidence[hop]}) for hop in walk.hops]
        cues = [
            Cue(text=self.verbalizer.clause(constraint), constraint=index, candidates=count)
            for index, (constraint, count) in enumerate(zip(construction.constraints, construction.candidates))
        ] + [
            Cue(
                text=self.verbalizer.fact_clause(described.fact),
                constraint=0,
                step=described.step,
                candidates=described.candidates,
            )
            for described in construction.facts
        ]
        constraints = [constraint.model_dump(mode="json") for constraint in construction.constraints]
        self.answered[construction.answer] += 1
        if self.answer_cap is not None and self.answered[construction.answer] >= self.answer_cap:
            self.walker.avoid_ending(construction.answer)
        return Item(
            id=content_hash({"recipe": RECIPE, "answer": construction.answer, "constraints": constraints}),
            question=question,
            answer=self.kg.name(construction.answer),
            aliases=self.kg.aliases(construction.answer),
            recipe=RECIPE,
            hops=shortcut.hops,
            answer_entity_id=construction.answer,
            path=path,
            constraints=list(construction.constraints),
            cues=cues,
            evidence_doc_ids=list(dict.fromkeys(evidence.values())),
            provenance=Provenance(
                generator=self.name, seed=self.seed, kg_snapshot=self.kg.snapshot, verbalizer=self.verbalizer.name
            ),
            metadata={
                "anchor": walk.entities[0],
                "style": self.style,
                "chain_hops": chain_hops,
                "effective_hops": shortcut.hops,
                **({"shortcut": shortcut.label} if shortcut.label else {}),
                "type_nouns": dict(self.verbalizer.nouns),
                **self._world_record(construction, rivals),
                "intermediates": list(walk.entities[1:-1]),
                "cue_edges": [
                    hop.model_copy(update={"evidence_doc_id": evidence[hop]}).model_dump(mode="json")
                    for hop in construction.edges[len(walk.hops) :]
                ],
            },
        )

    def _world_record(self, construction, rivals: float) -> dict:
        """What the item records of the larger world: the estimate, the other candidates a reader
        may add (`WorldModel.rivals`, what audits calibrate), the scale, and per constraint which
        steps are world-bounded (what tests re-derive from the raw triples)."""
        if self.world is None:
            return {}
        return {
            "world": {
                "answers": construction.world_answers,
                "rivals": round(rivals, 4),
                "scale": self.world.scale,
                "bounded_steps": [self.world.bounded_steps(constraint) for constraint in construction.constraints],
            }
        }

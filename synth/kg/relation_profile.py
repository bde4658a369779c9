"""What each relation is like, read from the graph, so the world estimate and the construction know
more than fan-outs: which classes stay closed as the world grows, which relations the graph lists
only in part, and which facts a reader trusts.

Per relation and direction of travel (`RelationProfile`):
- **closed**: the reached entities are a class that does not grow with the world (countries,
  languages, ethnic groups, time zones, genres, religions, professions, ...): a type noun in
  `CLOSED_TYPES`, or, where the graph names no type, a relation whose values are shared by so many
  holders (`closed_share`) that the class is saturated. A closed class caps any set of its members
  at its size (`class_size`, the graph's count times `closed_growth`).
- **transitive**: containment and its kin ("contains", "located in", "part of"): the graph lists one
  level ("Akron is in Summit County") while the world holds every level (Ohio, the United States): a
  step or fact over it reaches the transitive closure. Read from the graph (a share of two-step
  paths closed by a direct edge) or from the relation's words.
- **world_values**: how many values a holder has in the world where the graph lists about one
  (only by override): a country has had several capitals, a film has several composers, so "the
  capital of Russia" is not one city to a reader however many the graph lists.
- **trusted**: whether a reader trusts its facts. A relation whose reached side has no coherent
  type (a bookkeeping relation, "was split in Freebase into"), that the store's audits keep
  catching out (synth.audit.flags) or that an override file marks is not used as a hop, a fact
  or a cue. `untrusted()` lists them, so a version can say which
  relations it lost.

An override file per graph (`relation_overrides.yaml` in a snapshot folder, or
`<graph>.relation_overrides.yaml` beside an imported .duckdb) sets any of these by hand:

    /people/ethnicity/languages_spoken: {trusted: false, reason: "ethnic group -> language is loose"}
    /location/location/contains: {transitive: true}
    /location/country/capital: {world_values: 2, reason: "capitals move (Saint Petersburg, Moscow)"}

`world_values` counts the values of a holder in the forward direction (head to tails);
`world_values_of` does so for named holders only, where the relation is single-valued for most but
not for these (France is in 12 time zones with its overseas regions; the graph lists Central
European Time): {head id: values in the world};
`wrong_facts` lists single facts of the relation readers found wrong, as [head id, tail id] pairs
(never walked or used as a cue); `not_of` lists facts, as [relation id, tail id] pairs, whose holders
have the relation only as a reader would not read it, so their facts over it are never stated, though
still counted (an animated film has no filming locations: the places Freebase lists are its
settings); `soft: true` marks a relation no reader can rule anyone out of ("was influenced by":
Steve Carell may be as influenced by John Hughes as Judd Apatow): it may link the chain's
intermediates, but is never the step into the answer nor a cue on it.
"""

import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import yaml

from synth import bounded_yaml
from synth.errors import ConfigError
from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph
from synth.kg.types import BROADER, PERSON_KINDS, EntityTypes

if TYPE_CHECKING:
    from synth.audit.flags import RelationFlags

CLOSED_TYPES = frozenset(
    {
        "country",
        "continent",
        "language",
        "ethnic group",
        "time zone",
        "religion",
        "genre",
        "profession",
        "gender",
        "diet",
        "school type",
        "form of government",
        "film format",
        "sport",
        "color",
        "instrument",
        "instrument family",
        "currency",
        "cause of death",
        "industry",
        "fraternity or sorority",
    }
)
"""Type nouns of classes that do not grow when the world grows (the graph already holds most of them)."""
CONTAINMENT_WORDS = re.compile(r"\b(?:contain|contains|located|part of|within|division|subdivision|parent)\b")
TRANSITIVE_SHARE = 0.3
"""A relation is transitive when at least this share of its two-step paths a->b->c also has a->c."""
COHERENT_SHARE = 0.5
"""A relation's reached side is coherent when at least this share of its typed entities has its noun."""
SAMPLE = 150
"""Entities (runs) sampled per relation for its coherence and transitivity."""
FLAGGED_LIFT = 1.3
"""An audited relation is untrusted only where its items' wrong-fact share is this many times all items'."""


@dataclass(frozen=True)
class RelationProfile:
    relation: str
    direction: str
    """The direction of travel (forward: from head to tail)."""
    reached_noun: str
    closed: bool
    class_size: float
    """With `closed`: how many members the class has in the world."""
    transitive: bool
    coherence: float
    """Share of the reached entities (a sample, typed ones) whose own noun is the side's noun."""
    trusted: bool
    reason: str = ""
    world_values: float = 1.0
    """How many values a holder has in the world over this direction (an override; 1 otherwise)."""
    world_values_of: tuple[tuple[str, float], ...] = ()
    """(holder id, values in the world) for the holders an override names (forward only)."""
    soft: bool = False
    """No reader can rule an entity out of it (an override): never the step into an answer or a cue on one."""


def overrides_path(source: Path | None) -> Path | None:
    """Where a graph's override file lives (None for a graph not loaded from disk)."""
    if source is None:
        return None
    return source / "relation_overrides.yaml" if source.is_dir() else source.with_suffix(".relation_overrides.yaml")


def read_overrides(path: Path | None) -> dict[str, dict]:
    """relation id -> {trusted, transitive, closed, world_values, soft, reason}: the file's entries, checked;
    {} without one."""
    if path is None or not path.is_file():
        return {}
    try:
        data = bounded_yaml.load(path.read_text(), lambda line: f"{path}: line {line}") or {}
    except yaml.YAMLError as error:
        raise ConfigError(f"{path} is not valid YAML ({' '.join(str(error).split())}); fix the file") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"{path}: expected a mapping of relation id -> {{trusted, transitive, closed, world_values, reason}}"
        )
    known = {
        "trusted",
        "transitive",
        "closed",
        "world_values",
        "world_values_of",
        "wrong_facts",
        "not_of",
        "soft",
        "reason",
    }
    for relation, entry in data.items():
        if not isinstance(entry, dict) or set(entry) - known:
            raise ConfigError(
                f"{path}: entry {relation!r} must be a mapping with keys among {', '.join(sorted(known))}; "
                f"got {entry!r}"
            )
        for key, pair in (("wrong_facts", "head id, tail id"), ("not_of", "relation id, tail id")):
            if not _id_pairs(entry.get(key, [])):
                raise ConfigError(f"{path}: {relation}: {key} must be a list of [{pair}]; got {entry[key]!r}")
        if not isinstance(entry.get("soft", False), bool):
            raise ConfigError(f"{path}: {relation}: soft must be true or false; got {entry['soft']!r}")
        values = entry.get("world_values", 1)
        if isinstance(values, bool) or not isinstance(values, int | float) or values < 1:
            raise ConfigError(f"{path}: {relation}: world_values must be a number of at least 1; got {values!r}")
        per_holder = entry.get("world_values_of", {})
        if not isinstance(per_holder, dict) or not all(
            isinstance(head, str) and not isinstance(count, bool) and isinstance(count, int | float) and count >= 1
            for head, count in per_holder.items()
        ):
            raise ConfigError(
                f"{path}: {relation}: world_values_of must map head ids to numbers of at least 1; got {per_holder!r}"
            )
    return {str(relation): dict(entry) for relation, entry in data.items()}


def _id_pairs(value) -> bool:
    """Whether `value` is a list of [id, id] pairs (strings)."""
    return isinstance(value, list) and all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(part, str) for part in pair) for pair in value
    )


def graph_overrides(kg: KnowledgeGraph, path: Path | None = None) -> dict[str, dict]:
    """The overrides a graph is read with: the file at `path` where given, else the graph's own."""
    return read_overrides(path or overrides_path(kg.source))


def wrong_facts(overrides: dict[str, dict]) -> set[tuple[str, str, str]]:
    """(head, relation, tail) of the single facts an override file says are wrong."""
    return {
        (head, relation, tail) for relation, entry in overrides.items() for head, tail in entry.get("wrong_facts", [])
    }


def excluded_facts(kg: KnowledgeGraph, overrides: dict[str, dict]) -> set[tuple[str, str, str]]:
    """(head, relation, tail) of the facts whose head holds a fact `not_of` rules the relation out for
    (every filming location of an animated film)."""
    found = set()
    for relation, entry in overrides.items():
        for other, value in entry.get("not_of", []):
            if value not in kg.node_index or relation not in kg.relation_index:
                continue
            for head in kg.neighbors(value, other, INVERSE):
                found |= {(head, relation, tail) for tail in kg.neighbors(head, relation, FORWARD)}
    return found


class RelationProfiles:
    """Profiles of every relation of `kg`, computed on first use."""

    def __init__(
        self,
        kg: KnowledgeGraph,
        types: EntityTypes | None = None,
        overrides: dict[str, dict] | None = None,
        closed_growth: float = 2.0,
        closed_share: float = 0.07,
        flags: "RelationFlags | None" = None,
        flagged_share: float = 0.25,
        flagged_min: int = 3,
    ):
        """`flags`: what audits said of the relations (synth.audit.flags.RelationFlags); a relation
        with at least `flagged_min` rated items resting on a wrong fact, `flagged_share` of those
        rated and FLAGGED_LIFT times the share of all rated items, is not trusted."""
        self.flags, self.flagged_share, self.flagged_min = flags, flagged_share, flagged_min
        self.kg = kg
        self.types = types or EntityTypes(kg)
        self.overrides = overrides if overrides is not None else graph_overrides(kg)
        self.closed_growth, self.closed_share = closed_growth, closed_share
        self._profiles: dict[tuple[str, str], RelationProfile] = {}

    def __call__(self, relation: str, direction: str) -> RelationProfile:
        key = (relation, direction)
        if key not in self._profiles:
            self._profiles[key] = self._profile(relation, direction)
        return self._profiles[key]

    def untrusted(self) -> list[str]:
        """Relations (with their direction) that are not used, with the reason."""
        return [
            f"{profile.relation} ({profile.direction}): {profile.reason}"
            for relation in self.kg.relation_ids
            for direction in (FORWARD, INVERSE)
            if not (profile := self(relation, direction)).trusted
        ]

    @cached_property
    def _noun_counts(self) -> dict[str, int]:
        """Per type noun: the most entities any relation side of that noun holds (a class's size in the graph)."""
        counts: dict[str, int] = {}
        for direction in (FORWARD, INVERSE):
            index = self.kg.index(direction)
            for relation in np.unique(index.run_rel).tolist():
                noun = self.types.side_noun(self.kg.relation_ids[relation], direction)
                holders = int((index.run_rel == relation).sum())
                counts[noun] = max(counts.get(noun, 0), holders)
        return counts

    def _profile(self, relation: str, direction: str) -> RelationProfile:
        back = INVERSE if direction == FORWARD else FORWARD
        noun = self.types.side_noun(relation, back)  # the reached entity holds the relation the other way
        override = self.overrides.get(relation, {})
        reached = self._reached_sample(relation, direction)
        distinct = len(np.unique(reached)) if len(reached) else 0
        holders = self._holders(relation, direction)
        saturated = not noun and holders >= 50 and distinct <= self.closed_share * holders
        closed = bool(override.get("closed", noun in CLOSED_TYPES or saturated))
        class_size = max(self._noun_counts.get(noun, 0) if noun else 0, distinct, 1) * self.closed_growth
        transitive = bool(override.get("transitive", self._transitive(relation)))
        coherence = self._coherence(reached, noun)
        trusted, reason = True, ""
        if "trusted" in override:
            trusted = bool(override["trusted"])
            reason = str(override.get("reason") or "the graph's override file")
        elif self.flags is not None and self._flagged(relation):
            flagged, rated = self.flags.flagged[relation], self.flags.rated[relation]
            trusted, reason = False, f"audits: {flagged} of {rated} rated items using it rested on a wrong fact"
        elif noun and coherence < COHERENT_SHARE:
            trusted, reason = False, f"only {coherence:.0%} of the entities it reaches are a {noun}"
        world_values = float(override.get("world_values", 1)) if direction == FORWARD else 1.0
        per_holder = override.get("world_values_of", {}) if direction == FORWARD else {}
        return RelationProfile(
            relation,
            direction,
            noun,
            closed,
            class_size,
            transitive,
            coherence,
            trusted,
            reason,
            world_values,
            tuple((str(head), float(count)) for head, count in sorted(per_holder.items())),
            bool(override.get("soft", False)),
        )

    def _flagged(self, relation: str) -> bool:
        """Caught out often enough, and well above the items' own rate (every relation of an item with
        a wrong fact is blamed for it, the one at fault or not)."""
        flags = self.flags
        if flags is None:
            return False
        share = flags.share(relation)
        return (
            flags.flagged[relation] >= self.flagged_min
            and share >= self.flagged_share
            and share >= FLAGGED_LIFT * flags.base_share
        )

    def _holders(self, relation: str, direction: str) -> int:
        index = self.kg.index(direction)
        number = self.kg.relation_index.get(relation)
        return 0 if number is None else int((index.run_rel == number).sum())

    def _reached_sample(self, relation: str, direction: str) -> np.ndarray:
        index = self.kg.index(direction)
        number = self.kg.relation_index.get(relation)
        if number is None:
            return np.zeros(0, dtype=np.int32)
        runs = np.flatnonzero(index.run_rel == number)
        return np.concatenate([index.run_neighbors(run) for run in runs]) if len(runs) else np.zeros(0, np.int32)

    def _coherence(self, reached: np.ndarray, noun: str) -> float:
        """Share of a sample of the reached entities, among those with a noun, whose noun is `noun`."""
        if not noun or not len(reached):
            return 1.0
        sample = np.unique(reached)[:SAMPLE]
        nouns = [self.types.noun(self.kg.node_ids[node]) for node in sample.tolist()]
        typed = [found for found in nouns if found is not None]
        if len(typed) < 5:
            return 1.0
        wanted = PERSON_KINDS if noun in PERSON_KINDS else {noun}
        return sum(
            found in wanted or BROADER.get(found) == noun or BROADER.get(noun) == found for found in typed
        ) / len(typed)

    def _transitive(self, relation: str) -> bool:
        """Whether containment-like: its words say so, or two-step paths are often closed by a direct edge."""
        phrase = self.kg.relations[relation].forward if relation in self.kg.relations else ""
        if CONTAINMENT_WORDS.search(phrase.lower()):
            return True
        index = self.kg.index(FORWARD)
        number = self.kg.relation_index.get(relation)
        if number is None:
            return False
        runs = np.flatnonzero(index.run_rel == number)[:SAMPLE]
        paths = closed = 0
        for run in runs.tolist():
            first = index.run_neighbors(run)
            direct = set(first.tolist())
            for middle in first[:10].tolist():
                for end in index.lookup(middle, number)[:10].tolist():
                    if end in direct and end != middle:
                        closed += 1
                    paths += end != middle
        return paths >= 30 and closed / paths >= TRANSITIVE_SHARE

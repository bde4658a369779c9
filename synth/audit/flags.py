"""What audits say about a graph's relations: per relation, how many items people rated used it and how
many of those rested on a fact the reader found wrong (`answer_right` no); a served judge's verdicts
are left out until it is calibrated against people. The construction stops using a
relation readers keep catching out (synth.kg.relation_profile), so the store's audits calibrate the
next run on the same graph."""

from collections import Counter
from dataclasses import dataclass

from synth.audit.sample import read_items
from synth.errors import SynthError
from synth.schemas import Item
from synth.settings import Settings
from synth.store.audits import all_audits, load_ratings
from synth.store.catalog import Catalog


@dataclass(frozen=True)
class RelationFlags:
    flagged: Counter
    """Relation -> rated items using it whose stored answer a reader found wrong."""
    rated: Counter
    """Relation -> rated items using it (where the reader said right or wrong)."""
    items_flagged: int = 0
    items_rated: int = 0

    def share(self, relation: str) -> float:
        return self.flagged[relation] / self.rated[relation] if self.rated[relation] else 0.0

    @property
    def base_share(self) -> float:
        """The share of all rated items resting on a wrong fact: every relation of such an item is
        blamed, so a relation stands out only well above it."""
        return self.items_flagged / self.items_rated if self.items_rated else 0.0


def relations_of(item: Item) -> set[str]:
    """Every relation an item's question rests on: its path, its cues' edges and its facts."""
    found = {hop.relation for hop in item.path}
    found |= {edge.get("relation") for edge in item.metadata.get("cue_edges", []) if edge.get("relation")}
    found |= {fact.relation for constraint in item.constraints for step in constraint.steps for fact in step.where}
    return found


def relation_flags(settings: Settings, kg_snapshot: str) -> RelationFlags:
    """The flags of people's audits in the store of versions built on `kg_snapshot` (empty without any)."""
    flagged, rated = Counter(), Counter()
    items_flagged = items_rated = 0
    people = [run for run in all_audits(settings) if run.reader_kind == "person"]  # a judge is calibrated, not believed
    if not people:
        return RelationFlags(flagged, rated)
    try:
        with Catalog.open(settings, read_only=True) as catalog:
            versions = {(version.name, version.version): version for version in catalog.versions()}
    except SynthError:  # no catalog to read: nothing to calibrate on
        return RelationFlags(flagged, rated)
    items: dict[tuple[str, int], dict[str, Item]] = {}
    for run in people:
        for rating in load_ratings(settings, run.id):
            key = (rating.dataset, rating.version)
            version = versions.get(key)
            if version is None or version.kg_snapshot != kg_snapshot or rating.answer_right is None:
                continue
            if key not in items:
                items[key] = {item.id: item for item in read_items(settings, version)}
            item = items[key].get(rating.item_id)
            if item is None:
                continue
            items_rated += 1
            items_flagged += not rating.answer_right
            for relation in relations_of(item):
                rated[relation] += 1
                flagged[relation] += not rating.answer_right
    return RelationFlags(flagged, rated, items_flagged, items_rated)

"""Issue-level acceptance on 1,000 default items: unique answers (re-derived from the raw triples),
no name of a hidden entity inside a named one, grammar lint under 2%, mean length at most 25 words."""

import csv
import gzip
import re
import statistics
import unicodedata
from collections import defaultdict

import pytest

from synth.filters.grammar_lint import lint
from synth.generate import generate
from synth.kg.snapshot import bundled_path
from synth.settings import Settings
from synth.store.reader import iter_records


def _raw_tsv(name):
    with gzip.open(bundled_path() / name, "rt", encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE))


@pytest.fixture(scope="module")
def raw():
    forward, inverse = defaultdict(set), defaultdict(set)
    for row in _raw_tsv("triples.tsv.gz"):
        forward[(row["head"], row["relation"])].add(row["tail"])
        inverse[(row["tail"], row["relation"])].add(row["head"])
    names = {row["id"]: [row["name"], *[alias for alias in row["aliases"].split("|") if alias]] for row in _raw_tsv("entities.tsv.gz")}
    return forward, inverse, names


@pytest.fixture(scope="module")
def items(tmp_path_factory):
    settings = Settings(home=tmp_path_factory.mktemp("quality_home"))
    result = generate(settings, "multihop", ["n=1000", "seed=11", "panel.enabled=false"])
    return list(iter_records(settings, result.version, "items")), result.version


def _words(name: str) -> str:
    """Written here, not imported: lower case, no accents or punctuation, no articles."""
    text = unicodedata.normalize("NFKD", name)
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    words = [word for word in re.sub(r"[^\w\s]", " ", text).split() if word not in ("a", "an", "the")]
    return f" {' '.join(words)} " if words else ""


def _follow(raw, anchor, steps):
    forward, inverse, _ = raw
    frontier = {anchor}
    for step in steps:
        index = forward if step.direction == "forward" else inverse
        frontier = {neighbor for entity in frontier for neighbor in index[(entity, step.relation)]}
        for fact in step.where:
            frontier &= (forward if fact.direction == "forward" else inverse)[(fact.anchor, fact.relation)]
    return frontier


def test_every_answer_is_unique_under_the_raw_triples(items, raw):
    for item in items[0]:
        answers = set.intersection(*(_follow(raw, c.anchor, c.steps) for c in item.constraints))
        assert answers == {item.answer_entity_id}, item.question


def test_no_named_entity_contains_or_is_contained_in_a_hidden_name(items, raw):
    names = raw[2]
    for item in items[0]:
        named = {entity for constraint in item.constraints for entity in constraint.named}
        hidden = ({hop.head for hop in item.path} | {hop.tail for hop in item.path}) - named
        for entity in named:
            for other in hidden:
                for a in filter(None, map(_words, names[entity])):
                    for b in filter(None, map(_words, names[other])):
                        assert a not in b and b not in a, (item.question, a, b)
        question = _words(item.question)
        for other in hidden:
            for name in filter(None, map(_words, names[other])):
                assert name not in question, (item.question, name)


def test_grammar_lint_finds_under_two_percent_and_questions_stay_short(items, raw):
    published, version = items
    names = raw[2]
    flagged = [item.question for item in published
               if lint(item.question, [names[entity][0] for c in item.constraints for entity in c.named])]
    assert len(flagged) < 0.02 * len(published), flagged[:10]
    assert statistics.mean(len(item.question.split()) for item in published) <= 25
    quality = version.summary["quality"]
    assert quality["items"] == 1000 and quality["leaks"] == {} and quality["lint_items"] == len(flagged)
    assert len(quality["openings"]) >= 4 and quality["top_opening_share"] < 0.5

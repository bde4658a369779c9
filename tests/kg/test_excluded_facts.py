"""`not_of` in a relation override: a holder with one of these facts has the relation only as a
reader would not read it, so its facts over it are never stated, though still counted (an animated
film has no filming locations; readers called "a filming location for Madagascar 3" meaningless,
docs/audit.md, rounds 28-30)."""

import pytest
from named_graph import named_graph

from synth.errors import ConfigError
from synth.kg.graph import KnowledgeGraph
from synth.kg.relation_profile import excluded_facts, read_overrides
from synth.schemas import Triple


def _graph() -> KnowledgeGraph:
    triples = [
        Triple(head="/film/cartoon", relation="genre", tail="/genre/animation"),
        Triple(head="/film/cartoon", relation="shot_in", tail="/city/new-york"),
        Triple(head="/film/cartoon", relation="shot_in", tail="/city/london"),
        Triple(head="/film/drama", relation="genre", tail="/genre/drama"),
        Triple(head="/film/drama", relation="shot_in", tail="/city/new-york"),
    ]
    return named_graph(triples, "films")


def test_every_fact_of_a_holder_ruled_out_is_excluded_and_no_other(tmp_path):
    path = tmp_path / "relation_overrides.yaml"
    path.write_text("shot_in:\n  not_of:\n    - [genre, /genre/animation]\n    - [genre, /genre/absent]\n")
    assert excluded_facts(_graph(), read_overrides(path)) == {
        ("/film/cartoon", "shot_in", "/city/new-york"),
        ("/film/cartoon", "shot_in", "/city/london"),
    }


def test_a_malformed_entry_is_refused_in_one_line(tmp_path):
    path = tmp_path / "relation_overrides.yaml"
    path.write_text("shot_in:\n  not_of: [genre]\n")
    with pytest.raises(ConfigError, match="not_of must be a list of \\[relation id, tail id\\]"):
        read_overrides(path)

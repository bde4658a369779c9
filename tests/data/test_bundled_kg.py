"""The bundled knowledge graph in data/fb15k237 is complete, consistent and matches its manifest.

Hermetic: reads only the shipped files, located relative to this test file.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

KG_DIR = Path(__file__).resolve().parents[2] / "data" / "fb15k237"
DATA_FILES = ("triples.tsv.gz", "entities.tsv.gz", "relations.tsv")
EXPECTED_FILES = (*DATA_FILES, "manifest.json", "README.md", "LICENSE.ConvE-MIT.txt")


def _read_tsv(name: str) -> tuple[list[str], list[list[str]]]:
    raw = (KG_DIR / name).read_bytes()
    if name.endswith(".gz"):
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8")
    assert text.endswith("\n"), f"{name} does not end with a newline"
    assert "\r" not in text, f"{name} has carriage returns"
    lines = text[:-1].split("\n")
    return lines[0].split("\t"), [line.split("\t") for line in lines[1:]]


@pytest.fixture(scope="module")
def triples() -> list[tuple[str, str, str]]:
    header, rows = _read_tsv("triples.tsv.gz")
    assert header == ["head", "relation", "tail"]
    assert all(len(row) == 3 and all(row) for row in rows), "every triple row has 3 non-empty cells"
    return [tuple(row) for row in rows]


@pytest.fixture(scope="module")
def entities() -> dict[str, tuple[str, str]]:
    header, rows = _read_tsv("entities.tsv.gz")
    assert header == ["id", "name", "description", "aliases"]
    assert all(len(row) == 4 for row in rows), "every entity row has 4 cells"
    ids = [row[0] for row in rows]
    assert ids == sorted(ids), "entities are sorted by id"
    assert len(set(ids)) == len(ids), "entity ids are unique"
    return {row[0]: (row[1], row[2]) for row in rows}


def test_aliases_are_other_names_from_the_lead_sentence():
    _, rows = _read_tsv("entities.tsv.gz")
    aliases = {row[1]: row[3].split("|") for row in rows if row[3]}
    assert 2000 < len(aliases) < 4000
    assert aliases["Jeremy Irons"] == ["Jeremy John Irons"]
    assert aliases["Yemen"] == ["Republic of Yemen"] and aliases["Poliomyelitis"] == ["polio", "infantile paralysis"]
    assert aliases["Margaret Atwood"] == ["Margaret Eleanor Atwood"]  # post-nominal letters dropped
    assert "Saw VII" not in aliases and "Orange" not in aliases  # "Saw" is another film; "the city of Orange" no name
    assert all(
        alias and len(alias.split()) <= 6 and alias != name for name, names in aliases.items() for alias in names
    )


@pytest.fixture(scope="module")
def relations() -> dict[str, dict[str, str]]:
    header, rows = _read_tsv("relations.tsv")
    assert header == ["id", "forward", "inverse", "head_type", "tail_type", "head_role", "tail_role", "triples"]
    assert all(len(row) == 8 for row in rows), "every relation row has 8 cells"
    ids = [row[0] for row in rows]
    assert ids == sorted(ids) and len(set(ids)) == len(ids), "relation ids are sorted and unique"
    return {row[0]: dict(zip(header[1:], row[1:])) for row in rows}


@pytest.fixture(scope="module")
def manifest() -> dict:
    return json.loads((KG_DIR / "manifest.json").read_text(encoding="utf-8"))


def test_all_files_are_shipped_and_small():
    for name in EXPECTED_FILES:
        assert (KG_DIR / name).is_file(), f"missing {name}"
    total = sum(path.stat().st_size for path in KG_DIR.iterdir() if path.is_file())
    assert total < 5 * 1024 * 1024, f"bundled KG is {total} bytes; it should stay small"


def test_triples_are_unique_sorted_and_not_cvt(triples):
    assert triples, "no triples"
    assert triples == sorted(triples), "triples are sorted"
    assert len(set(triples)) == len(triples), "triples are unique"
    cvt = {r for _, r, _ in triples if "." in r}
    assert not cvt, f"CVT relations must be left out: {sorted(cvt)[:5]}"
    assert all(h.startswith("/m/") and t.startswith("/m/") for h, _, t in triples), "ends are Freebase mids"


def test_every_relation_has_phrases_and_types(triples, relations):
    used = Counter(r for _, r, _ in triples)
    assert set(used) == set(relations), (
        f"relations without a row: {sorted(set(used) - set(relations))}; "
        f"rows without triples: {sorted(set(relations) - set(used))}"
    )
    for relation, row in relations.items():
        for column in ("forward", "inverse"):
            value = row[column]
            assert value and value == value.strip(), f"{relation}: empty or untrimmed {column}"
        for column in ("head_type", "tail_type", "head_role", "tail_role"):  # may be empty: abstains / no role noun
            assert row[column] == row[column].strip(), f"{relation}: untrimmed {column}"
        for column in ("forward", "inverse"):
            last_word = row[column].split()[-1]
            assert last_word not in {"a", "an"}, f"{relation}: {column} ends with an article: {row[column]!r}"
            assert not row[column].endswith("."), f"{relation}: {column} must not carry the full stop"
        for column in ("head_type", "tail_type"):
            assert row[column] in ("Olympic Games", row[column].lower()), f"{relation}: {column} is not lowercase"
        assert int(row["triples"]) == used[relation], f"{relation}: triples column disagrees with the data"
    typed = sum(bool(row["head_type"]) + bool(row["tail_type"]) for row in relations.values())
    assert typed > 140 and sum(bool(row["head_role"] or row["tail_role"]) for row in relations.values()) > 40


def test_phrases_read_in_the_right_direction(triples, entities, relations):
    by_name: dict[str, set[str]] = {}
    for entity, (name, _) in entities.items():
        by_name.setdefault(name, set()).add(entity)

    def has(head: str, relation: str, tail: str) -> bool:
        return any((h, relation, t) in triple_set for h in by_name[head] for t in by_name[tail])

    triple_set = set(triples)
    assert has("Ridley Scott", "/film/director/film", "Alien")
    assert relations["/film/director/film"]["forward"] == "directed"
    assert relations["/film/director/film"]["inverse"] == "was directed by"
    assert has("India", "/location/location/contains", "Patna")
    assert relations["/location/location/contains"]["forward"] == "contains"
    assert relations["/people/person/profession"]["forward"] == "has the profession"


def test_every_triple_end_is_an_entity(triples, entities):
    ends = {h for h, _, _ in triples} | {t for _, _, t in triples}
    assert ends - entities.keys() == set(), "triple ends missing from entities.tsv"
    assert entities.keys() - ends == set(), "entities.tsv lists entities no triple uses"


def test_entity_text_is_clean(entities):
    for entity, (name, description) in entities.items():
        assert name and name == name.strip(), f"{entity}: empty or untrimmed name"
        assert not re.search(r"-(GB|US)$", name), f"{entity}: locale tag left in name {name!r}"
        assert "\\" not in name and "\\" not in description, f"{entity}: escape sequence left in text"
        assert description == description.strip(), f"{entity}: untrimmed description"
    described = sum(1 for _, description in entities.values() if description)
    assert described / len(entities) > 0.99, "almost every entity should have a description"


def test_manifest_counts_match_files(triples, entities, relations, manifest):
    counts = manifest["counts"]
    assert counts["triples"] == len(triples)
    assert counts["entities"] == len(entities)
    assert counts["relations"] == len(relations)
    assert counts["entities_missing_descriptions"] == sum(1 for _, d in entities.values() if not d)
    assert counts["self_loop_triples"] == sum(1 for h, _, t in triples if h == t)
    assert counts["dropped_cvt_triples"] > 0 and counts["dropped_cvt_relations"] > 0
    assert counts["triples"] + counts["dropped_cvt_triples"] == counts["source_unique_triples"]
    assert counts["relations"] + counts["dropped_cvt_relations"] == counts["source_relations"]
    assert manifest["build_script"] == "scripts/build_bundled_kg.py"
    assert set(manifest["source"]["sha256"]) >= {"FB15k-237.tar.gz", "entity2text_names.tsv", "entity2text_short.tsv"}


def test_snapshot_id_and_file_hashes_match(manifest):
    snapshot = hashlib.sha256()
    for name in DATA_FILES:
        data = (KG_DIR / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == manifest["files"][name], f"{name} changed since the build"
        snapshot.update(data)
    assert manifest["snapshot_id"] == "fb15k237-" + snapshot.hexdigest()[:16]


def test_gzip_members_are_deterministic():
    for name in ("triples.tsv.gz", "entities.tsv.gz"):
        header = (KG_DIR / name).read_bytes()[:10]
        assert header[:2] == b"\x1f\x8b", f"{name} is not gzip"
        assert header[4:8] == b"\x00\x00\x00\x00", f"{name} carries a modification time"
        assert header[3] & 0x08 == 0, f"{name} carries a file name"


def test_readme_states_provenance_and_licenses(manifest):
    readme = (KG_DIR / "README.md").read_text(encoding="utf-8")
    counts = manifest["counts"]
    assert manifest["snapshot_id"] in readme
    assert "python3 scripts/build_bundled_kg.py" in readme
    assert f"{counts['dropped_cvt_triples']:,}" in readme and str(counts["dropped_cvt_relations"]) in readme
    for needle in (
        "Toutanova",
        "Observed versus latent features",
        "CC BY 2.5",
        "CC BY-SA",
        "ConvE",
        "MIT",
        "LICENSE.ConvE-MIT.txt",
        "Wikipedia",
    ):
        assert needle in readme, f"README does not mention {needle}"
    assert "MIT" in (KG_DIR / "LICENSE.ConvE-MIT.txt").read_text(encoding="utf-8")

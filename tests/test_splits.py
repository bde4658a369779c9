"""Held-out splits: assigned by item id alone, the same in Python and in SQL, disjoint, and stable
across versions, re-exports and fractions that grow."""

import json

import datasets
import duckdb
import pytest

from synth.errors import ConfigError
from synth.splits import SPLITS, SplitFractions, split_of, split_sql
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version


def ids(n: int) -> list[str]:
    return [f"item-{index}" for index in range(n)]


def test_python_and_sql_assign_the_same_split():
    fractions = SplitFractions(validation=0.2, test=0.3)
    rows = duckdb.sql(f"select id, {split_sql('id', fractions)} from (select unnest({ids(500)!r}) as id)").fetchall()
    assert {item_id: split for item_id, split in rows} == {
        item_id: split_of(item_id, fractions) for item_id in ids(500)
    }


def test_shares_follow_the_fractions_and_growing_one_only_moves_items_from_train():
    small, large = SplitFractions(validation=0.05, test=0.1), SplitFractions(validation=0.05, test=0.3)
    before = {item_id: split_of(item_id, small) for item_id in ids(4000)}
    after = {item_id: split_of(item_id, large) for item_id in ids(4000)}
    shares = {split: sum(value == split for value in after.values()) / 4000 for split in SPLITS}
    assert shares["test"] == pytest.approx(0.3, abs=0.03) and shares["validation"] == pytest.approx(0.05, abs=0.015)
    for item_id, split in before.items():
        assert after[item_id] == split or (split == "train" and after[item_id] == "test")


def test_fractions_that_leave_no_train_split_are_one_line():
    with pytest.raises(ConfigError, match="leave a train split"):
        SplitFractions(validation=0.5, test=0.5)


def test_exports_by_split_are_disjoint_cover_the_version_and_keep_items_on_their_side(settings, make_item, tmp_path):
    publish_version(settings, VersionSpec(name="d", recipe="multihop"), {"items": [make_item(i) for i in range(60)]})
    first = {}
    for split in SPLITS:
        result = export_version(settings, "d", "jsonl", tmp_path / f"{split}.jsonl", split=split, test_fraction=0.2)
        first[split] = {json.loads(line)["id"] for line in (tmp_path / f"{split}.jsonl").open()}
        assert result.rows == len(first[split])
    assert first["train"] | first["validation"] | first["test"] == set(ids(60))
    assert sum(len(value) for value in first.values()) == 60 and all(first.values())
    held = export_version(settings, "d", "jsonl", tmp_path / "again.jsonl", test_fraction=0.2)
    assert f"held out: {len(first['validation'])} validation, {len(first['test'])} test" in held.notes[0]
    # a later version with more items, re-exported: every earlier item is in the split it was in
    publish_version(settings, VersionSpec(name="d", recipe="multihop"), {"items": [make_item(i) for i in range(90)]})
    for split in SPLITS:
        export_version(settings, "d@2", "jsonl", tmp_path / f"v2-{split}.jsonl", split=split, test_fraction=0.2)
        later = {json.loads(line)["id"] for line in (tmp_path / f"v2-{split}.jsonl").open()}
        assert first[split] <= later and later.isdisjoint(set().union(*(first[o] for o in SPLITS if o != split)))


def test_hf_export_of_every_split_holds_each_under_its_name(settings, make_item, tmp_path):
    publish_version(settings, VersionSpec(name="d", recipe="multihop"), {"items": [make_item(i) for i in range(60)]})
    export_version(settings, "d", "hf", tmp_path / "hf", split="all", test_fraction=0.2)
    loaded = datasets.load_from_disk(str(tmp_path / "hf"))
    assert set(loaded) == set(SPLITS) and sum(len(loaded[split]) for split in loaded) == 60
    fractions = SplitFractions(validation=0.05, test=0.2)
    assert all(split_of(row["id"], fractions) == split for split in loaded for row in loaded[split])


def test_sql_on_the_catalog_can_name_each_items_split(settings, make_item, run_cli):
    publish_version(settings, VersionSpec(name="d", recipe="multihop"), {"items": [make_item(i) for i in range(30)]})
    expression = split_sql("id", SplitFractions())
    code, out, _ = run_cli("sql", f"select id, {expression} as split from items order by id", "--json")
    assert code == 0
    assert {row["id"]: row["split"] for row in json.loads(out)} == {
        item_id: split_of(item_id, SplitFractions()) for item_id in ids(30)
    }

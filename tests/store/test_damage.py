"""One damaged file never takes the store down: the damaged version is named, the rest work."""

import json
import os
import shutil
from pathlib import Path

import pytest

from synth.settings import Settings
from synth.store.publish import VersionSpec, publish_version


@pytest.fixture
def store(settings, make_item):
    """demo@1 (1 item), demo@2 (2 items), other@1 (3 items)."""
    publish_version(settings, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(0)]})
    publish_version(settings, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(1), make_item(2)]})
    publish_version(
        settings, VersionSpec(name="other", recipe="multihop"), {"items": [make_item(i) for i in range(3, 6)]}
    )
    return settings


def _part(settings: Settings, ref: str) -> Path:
    name, version = ref.split("@")
    return settings.datasets_dir / name / f"v{version}" / "items" / "part-00000.parquet"


def _delete(part: Path) -> None:
    part.unlink()


def _truncate(part: Path) -> None:
    with open(part, "r+b") as handle:
        handle.truncate(part.stat().st_size // 2)


def _extra(part: Path) -> None:
    shutil.copy(part, part.with_name("part-00001.parquet"))


@pytest.mark.parametrize("damage, says", [(_delete, "missing"), (_truncate, "truncated"), (_extra, "extra part")])
def test_a_damaged_part_is_named_and_every_other_version_keeps_working(store, run_cli, tmp_path, damage, says):
    damage(_part(store, "demo@2"))

    code, out, err = run_cli("datasets", "list", "--json")
    assert code == 0 and len(json.loads(out)) == 3
    assert "demo@2 is damaged" in err and len([line for line in err.splitlines() if "demo@2" in line]) == 1

    code, out, _ = run_cli(
        "sql", "select dataset, version, count(*) as n from items group by all order by all", "--json"
    )
    assert code == 0
    assert json.loads(out) == [{"dataset": "demo", "version": 1, "n": 1}, {"dataset": "other", "version": 1, "n": 3}]

    code, _, err = run_cli(
        "export", "--split", "all", "other@1", "--format", "jsonl", "--out", str(tmp_path / "other.jsonl")
    )
    assert code == 0, err
    assert len((tmp_path / "other.jsonl").read_text().splitlines()) == 3
    code, _, err = run_cli(
        "export", "--split", "all", "demo@2", "--format", "jsonl", "--out", str(tmp_path / "demo.jsonl")
    )
    assert code != 0 and "demo@2 is damaged" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "demo.jsonl").exists()

    code, out, err = run_cli("datasets", "verify", "--json")
    assert code == 1 and "1 damaged version(s): demo@2" in err
    report = json.loads(out)
    assert report["demo@1"] == [] and report["other@1"] == [] and says in " ".join(report["demo@2"])
    assert "part-0000" in " ".join(report["demo@2"])


def test_a_rewritten_part_of_the_same_size_is_caught_by_its_hash(store, run_cli):
    part = _part(store, "other@1")
    data = bytearray(part.read_bytes())
    data[8] ^= 0xFF  # inside the first data page: the footer still reads
    part.write_bytes(bytes(data))
    code, out, _ = run_cli("datasets", "verify", "other", "--json")
    assert code == 1 and "SHA-256" in json.loads(out)["other@1"][0]


def test_a_truncated_catalog_is_rebuilt_from_the_manifests_keeping_the_runs(store, run_cli):
    code, _, err = run_cli("generate", "--recipe", "multihop", "--n", "4", "--llm", "fake", "--name", "made", "--quiet")
    assert code == 0, err
    catalog = store.catalog_path
    with open(catalog, "r+b") as handle:
        handle.truncate(5000)

    code, out, err = run_cli("datasets", "list", "--json")
    assert code == 0, err
    assert sorted(version["name"] + "@" + str(version["version"]) for version in json.loads(out)) == [
        "demo@1",
        "demo@2",
        "made@1",
        "other@1",
    ]
    assert "was damaged" in err and "rebuilt" in err
    assert list(catalog.parent.glob("synth.duckdb.damaged-*"))
    code, out, _ = run_cli("runs", "list", "--json")
    assert [run["status"] for run in json.loads(out)] == ["published"]
    code, out, _ = run_cli("datasets", "reindex")
    assert code == 0 and "registered 0 version(s)" in out


def test_generate_of_another_dataset_works_beside_a_damaged_version(store, run_cli):
    _truncate(_part(store, "demo@2"))
    code, _, err = run_cli(
        "generate", "--recipe", "multihop", "--n", "4", "--llm", "fake", "--name", "fresh", "--quiet"
    )
    assert code == 0, err


def test_a_moved_data_root_reads_through_synth_and_plain_duckdb(store, run_cli, tmp_path, monkeypatch):
    import duckdb

    moved = tmp_path / "moved"
    shutil.copytree(store.home, moved)
    shutil.rmtree(store.home)
    monkeypatch.setenv("SYNTH_HOME", str(moved))
    code, out, _ = run_cli("sql", "select count(*) as n from items", "--json")
    assert code == 0 and json.loads(out) == [{"n": 6}]
    monkeypatch.chdir(moved)  # plain DuckDB resolves the stored views' paths from the data root
    with duckdb.connect("synth.duckdb", read_only=True) as connection:
        assert connection.execute("select count(*) from items").fetchone() == (6,)


@pytest.mark.parametrize("damage", ["zero bytes", "garbage header"])
def test_an_empty_or_header_damaged_catalog_is_moved_aside_and_rebuilt(store, run_cli, damage):
    """Before, every command failed on these (reindex included) until the file was moved by hand."""
    catalog = store.catalog_path
    if damage == "zero bytes":
        catalog.write_bytes(b"")
    else:
        with open(catalog, "r+b") as handle:
            handle.write(b"\x00not a catalog" * 600)
    code, out, err = run_cli("datasets", "list", "--json")
    assert code == 0, err
    assert sorted(f"{v['name']}@{v['version']}" for v in json.loads(out)) == ["demo@1", "demo@2", "other@1"]
    assert "was damaged" in err and list(catalog.parent.glob("synth.duckdb.damaged-*"))


def test_a_version_folder_the_catalog_lost_keeps_its_number(store, run_cli, make_item):
    """A version whose manifest and catalog row are both gone still holds data on disk: the next
    publish takes the number after it instead of failing with 'Directory not empty'."""
    folder = store.datasets_dir / "demo" / "v2"
    (folder / "manifest.json").unlink()
    store.catalog_path.unlink()
    run_cli("datasets", "reindex")  # the catalog now knows demo@1 only
    version = publish_version(store, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(7)]})
    assert version.version == 3 and folder.is_dir()


def _rewrite_in_page(part: Path, keep_mtime: bool = False) -> bytes:
    original = part.read_bytes()
    stat = part.stat()
    data = bytearray(original)
    data[8:72] = bytes(byte ^ 0xFF for byte in data[8:72])  # 64 bytes inside the first data page
    part.write_bytes(bytes(data))
    if keep_mtime:
        os.utime(part, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return original


def test_a_same_size_rewrite_is_caught_without_verify_and_the_rest_keeps_working(store, run_cli):
    run_cli("sql", "select count(*) from items")  # the parts' states are known verified from here on
    _rewrite_in_page(_part(store, "other@1"))
    code, out, err = run_cli("sql", "select dataset, version, count(*) as n from items group by all", "--json")
    assert code == 0 and "other@1 is damaged" in err and "SHA-256" in err
    assert sorted((row["dataset"], row["version"], row["n"]) for row in json.loads(out)) == [
        ("demo", 1, 1),
        ("demo", 2, 2),
    ]
    code, _, err = run_cli(
        "export", "--split", "all", "other@1", "--format", "jsonl", "--out", str(store.home / "x.jsonl")
    )
    assert code != 0 and "damaged" in err and "--where" not in err


def test_a_rewrite_that_keeps_its_timestamps_is_caught_by_the_next_command_and_the_rest_answer(
    store, run_cli, tmp_path
):
    """`touch -r` (as `cp -p`, `rsync -t` or a restore) keeps size and mtime; before, the check trusted
    them: the damaged version stayed listed, `select * from items` failed for every version and the
    export blamed a --where it was not given."""
    import subprocess

    run_cli("sql", "select count(*) from items")  # the parts' states are known verified from here on
    part = _part(store, "other@1")
    reference = tmp_path / "reference"
    shutil.copy2(part, reference)
    _rewrite_in_page(part)
    subprocess.run(["touch", "-r", str(reference), str(part)], check=True)
    assert (part.stat().st_size, part.stat().st_mtime_ns) == (reference.stat().st_size, reference.stat().st_mtime_ns)

    code, out, err = run_cli("datasets", "list", "--json")
    assert code == 0 and "other@1 is damaged" in err and "SHA-256" in err
    assert {version["name"]: version["damaged"] for version in json.loads(out)} == {"demo": False, "other": True}
    code, out, _ = run_cli("sql", "select * from items", "--json")
    assert code == 0 and sorted(row["id"] for row in json.loads(out)) == ["item-0", "item-1", "item-2"]
    code, _, err = run_cli(
        "export", "--split", "all", "other@1", "--format", "jsonl", "--out", str(tmp_path / "o.jsonl")
    )
    assert code != 0 and "other@1 is damaged" in err and "--where" not in err
    code, _, err = run_cli(
        "export", "--split", "all", "demo@2", "--format", "jsonl", "--out", str(tmp_path / "d.jsonl")
    )
    assert code == 0, err


def test_damage_no_check_saw_is_found_when_a_query_reads_it_and_the_query_answers_without_it(store, run_cli):
    """Bit rot changes no file state: the read fails, the version is checked in full and quarantined,
    and the query runs again over the other versions."""
    from synth.store import health

    run_cli("sql", "select count(*) from items")
    part = _part(store, "other@1")
    original = _rewrite_in_page(part)
    key = str(part.relative_to(store.home.absolute()))
    verified = health._verified(store.home.absolute())
    verified[key][:4] = health._identity(part)  # the check believes this state verified (bit rot)
    health._save_verified(store.home.absolute())
    code, out, err = run_cli("sql", "select * from items", "--json")
    assert code == 0, err
    assert sorted(row["id"] for row in json.loads(out)) == ["item-0", "item-1", "item-2"]
    assert "other@1 is damaged" in err
    code, out, err = run_cli("sql", "select distinct dataset from items", "--json")
    assert json.loads(out) == [{"dataset": "demo"}]  # quarantined until verify finds it whole
    part.write_bytes(original)  # restored from a copy
    code, _, _ = run_cli("datasets", "verify", "other@1")
    assert code == 0
    code, out, _ = run_cli("sql", "select distinct dataset from items order by 1", "--json")
    assert json.loads(out) == [{"dataset": "demo"}, {"dataset": "other"}]


@pytest.mark.parametrize("record", ["parts.json", "manifest.json"])
def test_a_deleted_integrity_record_is_itself_damage(store, run_cli, record):
    """Before, deleting parts.json turned the check off and verify said ok."""
    (store.datasets_dir / "other" / "v1" / record).unlink()
    code, out, _ = run_cli("datasets", "verify", "other@1", "--json")
    assert code == 1 and any(record in problem and "missing" in problem for problem in json.loads(out)["other@1"])
    code, out, _ = run_cli("sql", "select distinct dataset from items order by 1", "--json")
    assert json.loads(out) == [{"dataset": "demo"}]


def test_reindex_names_a_version_folder_it_cannot_list(store, run_cli):
    (store.datasets_dir / "demo" / "v2" / "manifest.json").unlink()
    store.catalog_path.unlink()
    code, out, _ = run_cli("datasets", "reindex")
    assert code == 0 and "left out:" in out and "demo/v2: no manifest.json" in out


def test_a_configuration_clash_or_a_lock_is_never_taken_for_damage(store, run_cli):
    """Before, any DuckDB error opening our own catalog moved it aside and rebuilt it, losing the runs'
    funnels: a connection in the same process with other settings (the console's sandbox once set
    them on the shared instance) made every command 'recover' a healthy catalog."""
    import duckdb

    catalog = store.catalog_path
    inode = catalog.stat().st_ino
    clashing = duckdb.connect(str(catalog), config={"enable_external_access": False})
    try:
        code, _, err = run_cli("datasets", "list")
        assert code != 0 and "nothing was changed" in err and len(err.strip().splitlines()) == 1
    finally:
        clashing.close()
    assert catalog.stat().st_ino == inode and not list(catalog.parent.glob("*damaged*"))
    code, out, _ = run_cli("datasets", "list", "--json")
    assert code == 0 and len(json.loads(out)) == 3


def test_a_rebuilt_catalog_keeps_every_runs_funnel_and_summary(store, run_cli):
    code, _, err = run_cli("generate", "--recipe", "multihop", "--n", "4", "--llm", "fake", "--name", "made", "--quiet")
    assert code == 0, err
    _, before, _ = run_cli("runs", "list", "--json")
    store.catalog_path.write_bytes(b"")  # lost: the catalog file cannot give the runs back
    code, after, err = run_cli("runs", "list", "--json")
    assert code == 0 and "1 runs restored from their folders" in err
    assert json.loads(after) == json.loads(before) and json.loads(after)[0]["funnel"]

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from synth.errors import ConfigError, NotFoundError
from synth.schemas import FilterVerdict, FunnelStage
from synth.store.catalog import Catalog
from synth.store.publish import VersionSpec, publish_version
from synth.store.reader import iter_records


def spec(name="demo", **changes):
    values = dict(
        name=name,
        recipe="multihop",
        config={"n": 2, "hops": [2, 3]},
        seed=7,
        kg_snapshot="test-kg",
        funnel=[FunnelStage(stage="uniqueness", input=5, kept=2, dropped={"not_unique": 3})],
    )
    values.update(changes)
    return VersionSpec(**values)


def test_versions_are_numbered_per_dataset_and_record_lineage(settings, make_item):
    first = publish_version(settings, spec(), {"items": [make_item(0), make_item(1)]})
    second = publish_version(settings, spec(parent="demo@1"), {"items": [make_item(2)]})
    other = publish_version(settings, spec(name="other"), {"items": [make_item(3)]})
    assert (first.version, second.version, other.version) == (1, 2, 1)
    with Catalog.open(settings, read_only=True) as catalog:
        stored = catalog.resolve("demo@1")
        latest = catalog.resolve("demo")
    assert stored.recipe == "multihop" and stored.seed == 7 and stored.kg_snapshot == "test-kg"
    assert stored.config == {"n": 2, "hops": [2, 3]} and len(stored.config_hash) == 16
    assert stored.funnel[0].dropped == {"not_unique": 3}
    assert stored.row_counts == {"items": 2, "verdicts": 0, "attempts": 0, "labels": 0, "trajectories": 0}
    assert stored.code_version.startswith("0.")
    assert latest.version == 2 and latest.parent == "demo@1"


def test_records_round_trip_through_the_shards(settings, make_item):
    items = [make_item(index) for index in range(3)]
    verdicts = [
        FilterVerdict(
            item_id="item-0", filter="leakage", kept=False, reason="answer_in_question", details={"span": [3, 9]}
        )
    ]
    version = publish_version(settings, spec(), {"items": items, "verdicts": verdicts})
    assert list(iter_records(settings, version, "items")) == items
    assert list(iter_records(settings, version, "verdicts")) == verdicts


def test_views_query_every_published_version(settings, make_item):
    publish_version(settings, spec(), {"items": [make_item(0), make_item(1)]})
    publish_version(settings, spec(), {"items": [make_item(2)]})
    with Catalog.open(settings, read_only=True) as catalog:
        counts = catalog.connection.execute(
            "select version, count(*), min(path[1].relation), min(metadata->>'index') from items group by version "
            "order by version"
        ).fetchall()
    assert counts == [(1, 2, "/people/person/place_of_birth", "0"), (2, 1, "/people/person/place_of_birth", "2")]


def test_views_exist_before_anything_is_published(settings):
    with Catalog.open(settings, read_only=True) as catalog:
        assert catalog.connection.execute("select count(*) from items").fetchone() == (0,)
        columns = [row[0] for row in catalog.connection.execute("describe trajectories").fetchall()]
    assert {"dataset", "version", "messages", "tools"} <= set(columns)


def test_a_failure_while_writing_leaves_earlier_versions_intact_and_burns_the_number(settings, make_item, monkeypatch):
    publish_version(settings, spec(), {"items": [make_item(0)]})

    def broken_items():
        yield make_item(1)
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError, match="disk full"):
        publish_version(settings, spec(), {"items": broken_items()})
    with Catalog.open(settings, read_only=True) as catalog:
        assert [version.ref for version in catalog.versions()] == ["demo@1"]
        failed = [version for version in catalog.versions(include_unpublished=True) if version.status == "failed"]
        assert [version.ref for version in failed] == ["demo@2"]
        assert "disk full" in failed[0].summary["failure"]
        assert catalog.connection.execute("select count(*) from items").fetchone() == (1,)
    assert sorted(path.name for path in (settings.datasets_dir / "demo").iterdir()) == ["v1"]
    assert publish_version(settings, spec(), {"items": [make_item(2)]}).version == 3


def test_a_failure_at_the_final_rename_publishes_nothing(settings, make_item, monkeypatch):
    publish_version(settings, spec(), {"items": [make_item(0)]})
    monkeypatch.setattr("synth.store.publish.os.rename", lambda *args: (_ for _ in ()).throw(OSError("rename failed")))
    with pytest.raises(OSError):
        publish_version(settings, spec(), {"items": [make_item(1)]})
    with Catalog.open(settings, read_only=True) as catalog:
        assert [version.ref for version in catalog.versions()] == ["demo@1"]


_KILLED_WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from synth.schemas import Item, Provenance
    from synth.settings import Settings
    from synth.store.publish import VersionSpec, publish_version

    marker = Path(sys.argv[1])

    def items():
        for index in range(100_000):
            if index == 5_000:
                marker.write_text("writing")
                time.sleep(60)
            yield Item(id=f"x{index}", question=f"question {index}?", answer="a", recipe="multihop", hops=1,
                       provenance=Provenance(generator="test"))

    publish_version(Settings(), VersionSpec(name="demo", recipe="multihop"), {"items": items()})
    """
)


def test_a_writer_killed_mid_publish_leaves_the_catalog_consistent(settings, make_item, tmp_path):
    publish_version(settings, spec(), {"items": [make_item(0)]})
    marker = tmp_path / "marker"
    child = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, str(marker)], env=os.environ.copy())
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert child.poll() is None, "writer exited before reaching the kill point"
        assert time.monotonic() < deadline
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()

    with Catalog.open(settings, read_only=True) as catalog:
        assert [version.ref for version in catalog.versions()] == ["demo@1"]
        pending = [version for version in catalog.versions(include_unpublished=True) if version.status == "pending"]
        assert [version.ref for version in pending] == ["demo@2"]
        assert catalog.connection.execute("select count(*) from items").fetchone() == (1,)
    assert not (settings.datasets_dir / "demo" / "v2").exists()
    assert publish_version(settings, spec(), {"items": [make_item(1)]}).version == 3


def test_bad_dataset_names_and_tables_are_refused(settings, make_item):
    with pytest.raises(ConfigError, match="not allowed"):
        publish_version(settings, spec(name="../escape"), {"items": []})
    with pytest.raises(ConfigError, match="unknown tables"):
        publish_version(settings, spec(), {"questions": []})


def test_wrong_record_type_for_a_table_publishes_nothing(settings, make_item):
    with pytest.raises(TypeError, match="holds FilterVerdict records"):
        publish_version(settings, spec(), {"verdicts": [make_item(0)]})
    with Catalog.open(settings, read_only=True) as catalog:
        assert catalog.versions() == []


def test_resolve_names_what_exists(settings, make_item):
    publish_version(settings, spec(), {"items": [make_item(0)]})
    with Catalog.open(settings, read_only=True) as catalog:
        with pytest.raises(NotFoundError, match="known datasets: demo"):
            catalog.resolve("missing")
        with pytest.raises(NotFoundError, match=r"published: 1\)"):
            catalog.resolve("demo@4")
        with pytest.raises(NotFoundError, match="positive integer"):
            catalog.resolve("demo@latest")


def test_manifest_is_written_with_the_version(settings, make_item):
    version = publish_version(settings, spec(), {"items": [make_item(0)]})
    manifest = json.loads((settings.home / version.path / "manifest.json").read_text())
    assert manifest["name"] == "demo" and manifest["version"] == 1 and manifest["row_counts"]["items"] == 1

import shutil

import duckdb
import pytest

from synth.errors import CatalogError
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.publish import VersionSpec, publish_version
from synth.store.reindex import reindex


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path, monkeypatch):
    broken = tmp_path / "broken.duckdb"
    broken.write_bytes(b"this is not a duckdb file" * 100)
    monkeypatch.setenv("SYNTH_CATALOG", str(broken))
    with pytest.raises(CatalogError, match="cannot open catalog"):
        with Catalog.open(Settings(), read_only=True):
            pass


def test_a_folder_as_catalog_path_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("SYNTH_CATALOG", str(tmp_path))
    with pytest.raises(CatalogError, match="not a file"):
        with Catalog.open(Settings()):
            pass


def test_a_foreign_duckdb_file_is_not_taken_for_a_catalog(tmp_path, monkeypatch):
    foreign = tmp_path / "foreign.duckdb"
    duckdb.connect(str(foreign)).execute("create table t (a int)").close()
    monkeypatch.setenv("SYNTH_CATALOG", str(foreign))
    with pytest.raises(CatalogError, match="not a synth catalog"):
        with Catalog.open(Settings(), read_only=True):
            pass


def test_a_busy_catalog_waits_then_says_so(settings, monkeypatch):
    monkeypatch.setenv("SYNTH_LOCK_TIMEOUT_S", "0.3")
    with Catalog.open(settings):
        import multiprocessing

        # DuckDB locks per process, so the second opener must be another process.
        context = multiprocessing.get_context("spawn")
        queue = context.Queue()
        process = context.Process(target=_try_open, args=(str(settings.home), queue))
        process.start()
        process.join(60)
    assert "busy" in queue.get(timeout=5)


def _try_open(home, queue):
    import os

    os.environ["SYNTH_HOME"] = home
    os.environ["SYNTH_LOCK_TIMEOUT_S"] = "0.3"
    try:
        with Catalog.open(Settings(), read_only=True):
            queue.put("opened")
    except CatalogError as error:
        queue.put(str(error))


def test_reindex_rebuilds_a_lost_catalog_from_the_version_folders(settings, make_item):
    publish_version(settings, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(0)]})
    publish_version(settings, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(1), make_item(2)]})
    settings.catalog_path.unlink()
    assert reindex(settings).found == ["demo@1", "demo@2"]
    with Catalog.open(settings, read_only=True) as catalog:
        assert catalog.connection.execute("select count(*) from items").fetchone() == (3,)
    assert reindex(settings).found == []


def test_views_follow_a_moved_data_root(settings, make_item, tmp_path, monkeypatch):
    publish_version(settings, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(0)]})
    moved = tmp_path / "moved"
    shutil.move(str(settings.home), moved)
    monkeypatch.setenv("SYNTH_HOME", str(moved))
    with Catalog.open(Settings(), read_only=True) as catalog:
        assert catalog.connection.execute("select count(*) from items").fetchone() == (1,)

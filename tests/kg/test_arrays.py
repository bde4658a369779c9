"""Imported graphs load memory-mapped from their arrays folder: the same graph, the same items."""

from pathlib import Path

import numpy as np
import pytest

from synth.kg.arrays import EntityTable, arrays_folder
from synth.kg.importer import ImportSource, import_graph
from synth.kg.snapshot import bundled_path
from synth.kg.store import load_graph
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("arrays")
    return Path(import_graph("fb", ImportSource.from_folder(bundled_path()), home / "kg").path)


def same_graph(loaded, built) -> None:
    assert (
        loaded.snapshot == built.snapshot
        and loaded.node_ids == built.node_ids
        and loaded.relation_ids == built.relation_ids
    )
    assert loaded.relations == built.relations
    for direction in ("out_index", "in_index"):
        for name in ("run_ptr", "run_rel", "run_start", "neighbors"):
            assert np.array_equal(
                getattr(getattr(loaded, direction), name), getattr(getattr(built, direction), name)
            ), (direction, name)
    assert dict(loaded.entities.items()) == dict(built.entities.items())
    assert (loaded.named == built.named).all()


def test_the_first_load_saves_arrays_and_later_loads_map_them_back_identically(imported):
    built = load_graph(imported, log=lambda line: None)
    assert not isinstance(built.entities, EntityTable) and arrays_folder(imported).is_dir()
    mapped = load_graph(imported, log=lambda line: None)
    assert isinstance(mapped.entities, EntityTable) and isinstance(mapped.out_index.neighbors, np.memmap)
    same_graph(mapped, built)
    assert mapped.name("/m/09c7w0") == "United States of America" and mapped.aliases("/m/016ywr") == [
        "Jeremy John Irons"
    ]
    assert (
        "/m/09c7w0" in mapped.entities
        and "/m/not-there" not in mapped.entities
        and mapped.entities.get("/m/not-there") is None
    )


@pytest.mark.slow  # imports the whole bundled graph
def test_walks_on_the_mapped_graph_make_the_same_items(imported, tmp_path):
    arguments = [f"world.kg={imported}", "n=9", "seed=2", "hops=[2,3]", "panel.enabled=false"]
    load_graph(imported, log=lambda line: None)  # the arrays exist: the runs below both map them
    runs = []
    for where in ("a", "b"):
        settings = Settings(home=tmp_path / where)
        runs.append(
            [
                item.model_dump(exclude={"created_at"})
                for item in iter_records(settings, generate(settings, "multihop", arguments).version, "items")
            ]
        )
    import synth.kg.store

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(synth.kg.store, "load_arrays", lambda folder, snapshot: None)  # the graph as DuckDB gives it
        settings = Settings(home=tmp_path / "duckdb")
        from_duckdb = [
            item.model_dump(exclude={"created_at"})
            for item in iter_records(settings, generate(settings, "multihop", arguments).version, "items")
        ]
    assert runs[0] and runs[0] == runs[1] == from_duckdb


def test_damaged_or_stale_arrays_are_reported_and_rebuilt(imported):
    from synth.kg.store import _load_from_duckdb

    built = _load_from_duckdb(imported)  # not mapped: the files below change under it
    load_graph(imported, log=lambda line: None)
    folder = arrays_folder(imported)
    damaged = folder / "out_neighbors.npy"
    damaged.unlink()  # a new file, not the one a mapped graph of this process may still read
    damaged.write_bytes(b"\x93NUMPY damaged")
    said: list[str] = []
    same_graph(load_graph(imported, log=said.append), built)
    assert any("damaged" in line and "rebuilding" in line for line in said)
    assert isinstance(load_graph(imported, log=said.append).entities, EntityTable)  # rebuilt whole
    meta = folder / "meta.json"
    meta.write_text(meta.read_text().replace(built.snapshot, "an-older-snapshot"))
    assert not isinstance(load_graph(imported, log=said.append).entities, EntityTable)  # stale: not used, rewritten
    assert isinstance(load_graph(imported, log=said.append).entities, EntityTable)

"""Store throughput: publishing items (records -> Parquet shards -> catalog), exporting, querying;
and what the integrity check costs the commands that read parts.

    python benchmarks/bench_store.py [--rows 100000]
    python benchmarks/bench_store.py --integrity [--rows 1000000] [--home DIR]

Prints rows/s for publish and verl export, the ratio of publish to pyarrow building and writing the
same rows already converted to dicts (the backend's raw speed: what remains is record conversion,
validation and bookkeeping), SQL latency over the views, and peak memory.

With --integrity: publishes one version of --rows items (kept and reused with --home), then times the
part check a command runs before it reads (synth.store.health) as a fresh process meets it: every
state known (stats and footers only), one part rewritten in place with its timestamps kept as
`touch -r` does (that part hashed again), every part hashed (`datasets verify`, and what a copied
data root costs once), and one whole `synth sql` count against the same count run by DuckDB itself.
"""

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from _measure import peak_rss_mib, timed  # noqa: E402

from synth.schemas import Constraint, Cue, Hop, Item, Provenance, Step  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.arrow_schema import to_row  # noqa: E402
from synth.store.export import export_version  # noqa: E402
from synth.store.publish import VersionSpec, publish_version  # noqa: E402
from synth.store.query import run_query  # noqa: E402
from synth.store.tables import table_schema  # noqa: E402


def make_items(rows: int, labels: tuple[str, ...] = ("unlabeled",), start: int = 0):
    """`rows` items numbered from `start`, labeled round-robin from `labels`."""
    for index in range(start, start + rows):
        yield Item(
            id=f"item-{index:08d}",
            question=f"Which film was directed by a person who was born in the town number {index} of the county?",
            answer=f"Film {index}",
            aliases=[f"The Film {index}"],
            recipe="multihop",
            hops=2,
            answer_entity_id=f"/m/f{index}",
            path=[
                Hop(
                    head=f"/m/p{index}",
                    relation="/people/person/place_of_birth",
                    tail=f"/m/t{index}",
                    direction="inverse",
                    evidence_doc_id=f"/m/p{index}#0",
                ),
                Hop(
                    head=f"/m/p{index}",
                    relation="/film/director/film",
                    tail=f"/m/f{index}",
                    evidence_doc_id=f"/m/p{index}#0",
                ),
            ],
            constraints=[
                Constraint(
                    anchor=f"/m/t{index}",
                    steps=[
                        Step(relation="/people/person/place_of_birth", direction="inverse"),
                        Step(relation="/film/director/film"),
                    ],
                )
            ],
            cues=[Cue(text="was directed by a person who was born in the town", constraint=0, candidates=3)],
            evidence_doc_ids=[f"/m/p{index}#0"],
            difficulty=labels[index % len(labels)],
            provenance=Provenance(generator="bench", seed=0, kg_snapshot="bench"),
            metadata={"anchor": f"/m/t{index}"},
        )


def integrity(rows: int, home: Path) -> None:
    """The integrity check's cost on a version of `rows` items under `home` (published once)."""
    import subprocess

    import duckdb

    from synth.store import health
    from synth.store.catalog import Catalog

    settings = Settings(home=home)
    with Catalog.open(settings, read_only=True) as catalog:
        versions = catalog.versions("checked")
    if not versions or versions[-1].row_counts.get("items") != rows:
        if versions:
            raise SystemExit(f"{home} holds a `checked` version of another size; give an empty --home")
        started = time.perf_counter()
        publish_version(settings, VersionSpec(name="checked", recipe="multihop"), {"items": make_items(rows)})
        print(f"published {rows} items in {time.perf_counter() - started:.0f} s")
        with Catalog.open(settings, read_only=True) as catalog:
            versions = catalog.versions("checked")
    version = versions[-1]
    folder = settings.home.absolute() / version.path
    parts = sorted(folder.rglob("*.parquet"))
    size = sum(part.stat().st_size for part in parts)

    def fresh_process() -> None:  # what a new command starts with: the verified states on disk, no footers
        health._VERIFIED.clear()
        health._footer_rows.cache_clear()

    results: dict[str, float] = {}
    health.problems(settings.home.absolute(), version)  # the states are known from here on
    fresh_process()
    with timed(results, "known"):
        assert health.problems(settings.home.absolute(), version) == []
    items_part = sorted((folder / "items").glob("*.parquet"))[0]
    subprocess.run(["touch", "-r", str(items_part), str(items_part)], check=True)  # ctime moves, as on a write
    fresh_process()
    with timed(results, "touched"):
        assert health.problems(settings.home.absolute(), version) == []
    fresh_process()
    with timed(results, "deep"):
        assert health.problems(settings.home.absolute(), version, deep=True) == []
    with timed(results, "sql"):
        run_query(settings, "select count(*) from items where version = 1")
    with timed(results, "raw"), duckdb.connect() as connection:
        connection.sql(f"select count(*) from read_parquet('{folder}/items/*.parquet')").fetchall()
    print(f"version                   {rows:,} items, {len(parts)} parts, {size / 2**20:,.0f} MiB of Parquet")
    print(f"check, states known       {results['known'] * 1000:>10.1f} ms (a stat and a footer per part)")
    print(
        f"check, one part touched   {results['touched'] * 1000:>10.1f} ms (that part, "
        f"{items_part.stat().st_size / 2**20:,.0f} MiB, hashed again)"
    )
    print(
        f"check, every part hashed  {results['deep'] * 1000:>10.1f} ms ({size / 2**20 / results['deep']:,.0f} MiB/s; "
        "`datasets verify`, or once on a copied data root)"
    )
    print(
        f"synth sql count           {results['sql'] * 1000:>10.1f} ms, DuckDB alone {results['raw'] * 1000:.1f} ms "
        f"({results['sql'] / results['raw']:.1f}x: catalog copy, checks, private database)"
    )
    print(
        f"scrub per command         at most {health.SCRUB_BYTES >> 20} MiB of parts verified over "
        f"{health.SCRUB_AFTER_S / 3600:.0f} h ago"
    )
    print(f"peak memory               {peak_rss_mib():>10.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None, help="100,000 (1,000,000 with --integrity)")
    parser.add_argument("--integrity", action="store_true", help="Time the integrity check instead.")
    parser.add_argument("--home", type=Path, default=None, help="Keep the --integrity data root here and reuse it.")
    arguments = parser.parse_args()
    if arguments.integrity:
        rows = arguments.rows or 1_000_000
        if arguments.home:
            integrity(rows, arguments.home)
        else:
            with tempfile.TemporaryDirectory() as folder:
                integrity(rows, Path(folder))
        return
    rows = arguments.rows or 100_000
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(home=Path(folder) / "home")
        items = list(make_items(rows))
        converted = [{"dataset": "raw", "version": 1, **to_row(item)} for item in items]
        with timed(results, "raw_pyarrow"):
            table = pa.Table.from_pylist(converted, schema=table_schema("items"))
            pq.write_table(table, Path(folder) / "raw.parquet", compression="zstd")
        del converted, table
        with timed(results, "publish"):
            publish_version(settings, VersionSpec(name="bench", recipe="multihop"), {"items": items})
        with timed(results, "export_verl"):
            export_version(settings, "bench", "verl", Path(folder) / "train.parquet")
        with timed(results, "sql_count_by_hops"):
            run_query(settings, "select hops, count(*) from items group by hops")
        with timed(results, "sql_point_lookup"):
            run_query(settings, f"select question from items where id = 'item-{rows // 2:08d}'")
        size = sum(path.stat().st_size for path in (settings.home / "datasets" / "bench" / "v1").rglob("*.parquet"))
    print(f"rows                      {rows}")
    print(
        f"publish                   {rows / results['publish']:>10,.0f} rows/s  ({results['publish']:.2f} s, "
        f"{size / 2**20:.1f} MiB of Parquet)"
    )
    print(
        f"raw pyarrow write         {rows / results['raw_pyarrow']:>10,.0f} rows/s  -> publish runs at "
        f"{results['raw_pyarrow'] / results['publish']:.2f} of raw"
    )
    print(f"export verl               {rows / results['export_verl']:>10,.0f} rows/s  ({results['export_verl']:.2f} s)")
    print(f"sql group by over views   {results['sql_count_by_hops'] * 1000:>10.0f} ms (includes opening the catalog)")
    print(f"sql point lookup          {results['sql_point_lookup'] * 1000:>10.0f} ms")
    print(f"peak memory               {peak_rss_mib():>10.0f} MiB (items held in memory: {rows})")


if __name__ == "__main__":
    main()

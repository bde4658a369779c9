"""Store throughput: publishing items (records -> Parquet shards -> catalog), exporting, querying;
and what the integrity check costs the commands that read parts.

    python benchmarks/bench_store.py [--rows 100000]
    python benchmarks/bench_store.py --integrity [--rows 1000000] [--home DIR]
    python benchmarks/bench_store.py --home s3://synth-bench/store [--rows 100000]

Prints rows/s for publish and verl export, the ratio of publish to pyarrow building and writing the
same rows already converted to dicts (the backend's raw speed: what remains is record conversion,
validation and bookkeeping), SQL latency over the views, and peak memory.

With --integrity: publishes one version of --rows items (kept and reused with --home), then times the
part check a command runs before it reads (synth.store.health) as a fresh process meets it: every
state known (stats and footers only), one part rewritten in place with its timestamps kept as
`touch -r` does (that part hashed again), every part hashed (`datasets verify`, and what a copied
data root costs once), and one whole `synth sql` count against the same count run by DuckDB itself.

With --home s3://...: the same publish, export and queries on a bucket data root (published from one
machine, exported and queried from a second one, each with its own local copy) against a local data
root, with the ratio; without SYNTH_S3_ENDPOINT a SeaweedFS server on loopback is started for it.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from _measure import peak_rss_mib, timed  # noqa: E402

from synth.bucket import parse_bucket_url  # noqa: E402
from synth.schemas import Constraint, Cue, Hop, Item, Provenance, Step  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.arrow_schema import to_row  # noqa: E402
from synth.store.bucket_root import pull  # noqa: E402
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
    parser.add_argument(
        "--home",
        default=None,
        help="With --integrity: keep the data root here and reuse it. A bucket URL (s3://bucket/prefix): "
        "time publish, export and queries there against a local data root",
    )
    arguments = parser.parse_args()
    if arguments.integrity:
        rows = arguments.rows or 1_000_000
        if arguments.home:
            integrity(rows, Path(arguments.home))
        else:
            with tempfile.TemporaryDirectory() as folder:
                integrity(rows, Path(folder))
        return
    rows = arguments.rows or 100_000
    items = list(make_items(rows))
    if arguments.home is not None and str(arguments.home).startswith("s3:/"):
        on_a_bucket(items, "s3://" + str(arguments.home)[len("s3:/") :].lstrip("/"))
        return
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(home=Path(folder) / "home")
        converted = [{"dataset": "raw", "version": 1, **to_row(item)} for item in items]
        with timed(results, "raw_pyarrow"):
            table = pa.Table.from_pylist(converted, schema=table_schema("items"))
            pq.write_table(table, Path(folder) / "raw.parquet", compression="zstd")
        del converted, table
        results |= publish_export_query(settings, items, Path(folder))
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


def publish_export_query(settings: Settings, items: list[Item], folder: Path, reader: Settings | None = None) -> dict:
    """Seconds to publish `items` as bench@1, then export it to verl and run two queries, from
    `reader` (another machine of the same data root: its first command copies the version) or
    from the publisher's own settings."""
    results: dict[str, float] = {}
    reader = reader or settings
    with timed(results, "publish"):
        publish_version(settings, VersionSpec(name="bench", recipe="multihop"), {"items": items})
    if reader is not settings:
        with timed(results, "pull"):
            pull(reader, quiet=True)
    with timed(results, "export_verl"):
        export_version(reader, "bench", "verl", folder / "train.parquet")
    with timed(results, "sql_count_by_hops"):
        run_query(reader, "select hops, count(*) from items group by hops")
    with timed(results, "sql_point_lookup"):
        run_query(reader, f"select question from items where id = 'item-{len(items) // 2:08d}'")
    return results


def on_a_bucket(items: list[Item], url: str) -> None:
    """The same publish, export and queries on a data root in a bucket (publisher and a second
    machine, each with its own local copy) and on a local one, with the ratio. Without
    SYNTH_S3_ENDPOINT, a SeaweedFS server on loopback is started for the run (the test extra)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "store"))
    from seaweed import BUCKET, Seaweed

    with tempfile.TemporaryDirectory() as folder:
        server = None
        if not os.environ.get("SYNTH_S3_ENDPOINT"):
            server = Seaweed(Path(folder) / "seaweed").start()  # holds one bucket: the URL's prefix is kept
            url = f"s3://{BUCKET}/{parse_bucket_url(url).prefix}"
            os.environ.update(server.environ())
        try:
            (Path(folder) / "local").mkdir()
            local = publish_export_query(Settings(home=Path(folder) / "local"), items, Path(folder) / "local")
            publisher = Settings(home=url, local_home=Path(folder) / "publisher")
            reader = Settings(home=url, local_home=Path(folder) / "reader")
            bucket = publish_export_query(publisher, items, Path(folder), reader)
        finally:
            if server is not None:
                server.stop()
    print(f"rows                      {len(items)}  (bucket {url}{' on loopback SeaweedFS' if server else ''})")
    print(f"{'':26}{'local':>10}{'bucket':>10}{'ratio':>8}")
    for key, label in (
        ("publish", "publish"),
        ("export_verl", "export verl"),
        ("sql_count_by_hops", "sql group by"),
        ("sql_point_lookup", "sql point lookup"),
    ):
        print(f"{label:<26}{local[key]:>9.2f}s{bucket[key]:>9.2f}s{bucket[key] / local[key]:>7.2f}x")
    print(f"{'copy to a second machine':<26}{'':>10}{bucket['pull']:>9.2f}s   (once per new version)")
    print("the bucket's export and queries run on the second machine's local copy, after that copy")
    print(f"peak memory               {peak_rss_mib():>10.0f} MiB")


if __name__ == "__main__":
    main()

"""Store throughput: publishing items (records -> Parquet shards -> catalog), exporting, querying.

    python benchmarks/bench_store.py [--rows 100000]

Prints rows/s for publish and verl export, the ratio of publish to pyarrow building and writing the
same rows already converted to dicts (the backend's raw speed: what remains is record conversion,
validation and bookkeeping), SQL latency over the views, and peak memory.
"""

import argparse
import sys
import tempfile
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    rows = parser.parse_args().rows
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

"""Trajectory exports: rows/s of sft, sharegpt and searchr1-sft with the agent-contract rendering,
against writing the stored messages as they are (the floor: read, validate, dump).

Every trajectory export renders each trajectory under a contract (`synth.contract.render`):
rebuilding the prompt, mapping calls and, across contracts, parsing and re-rendering every search
result. This measures what that costs on teacher-shaped trajectories (3 searches of 3 passages and an
answer, so every contract can show them) in a temporary data root:

    python benchmarks/bench_exports.py --rows 20000

`--select` measures instead the model-aware selection of RL items (`--for-eval ID --pass-band`):
an items file of `--items` rows (1M by default) and an eval of `--samples` attempts per item, the band's
DuckDB predicate with the split rule, the rows it keeps read as Arrow (no item reaches Python), and
the note's counts by hops and label:

    python benchmarks/bench_exports.py --select --items 1000000 --samples 4
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import peak_rss_mib  # noqa: E402

from synth.contract import portable  # noqa: E402
from synth.schemas import ChatMessage, FunctionCall, Hop, Item, Provenance, ToolCall, Trajectory  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.catalog import Catalog  # noqa: E402
from synth.store.export import export_version  # noqa: E402
from synth.store.export.options import ExportRequest  # noqa: E402
from synth.store.export.trajectories import training_trajectories  # noqa: E402
from synth.store.publish import VersionSpec, publish_version  # noqa: E402


def make(rows: int) -> tuple[list[Item], list[Trajectory]]:
    items, trajectories = [], []
    for index in range(rows):
        question = f"Which film was directed by the person born in Town {index}?"
        items.append(
            Item(
                id=f"item-{index}",
                question=question,
                answer=f"Film {index}",
                recipe="multihop",
                hops=1,
                path=[Hop(head=f"/m/p{index}", relation="/film/director/film", tail=f"/m/f{index}")],
                provenance=Provenance(generator="bench"),
            )
        )
        messages = [
            ChatMessage(role="system", content="agent prompt"),
            ChatMessage(role="user", content=f"Question: {question}"),
        ]
        for turn in range(3):
            documents = [
                {
                    "id": f"/m/d{index}_{turn}_{k}#0",
                    "title": f"Entity {k}",
                    "text": f"Entity {k} was born in Town {index}. " * 8,
                }
                for k in range(3)
            ]
            call = ToolCall(
                id=f"call_{turn}",
                function=FunctionCall(name="search", arguments=json.dumps({"query": f"q{turn} {index}"})),
            )
            messages += [
                ChatMessage(role="assistant", content=f"Step {turn}.", tool_calls=[call]),
                ChatMessage(role="tool", tool_call_id=call.id, content=portable.render_search("synth", [documents])),
            ]
        messages.append(ChatMessage(role="assistant", content=f"<answer>Film {index}</answer>"))
        trajectories.append(
            Trajectory(
                id=f"t{index}",
                item_id=f"item-{index}",
                role="teacher",
                model="bench",
                messages=messages,
                selected=True,
                metadata={"contract": "synth"},
            )
        )
    return items, trajectories


def select(count: int, samples: int) -> None:
    """The pass-band selection over `count` items and `samples` attempts per item, timed."""
    import duckdb
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from synth.splits import SplitFractions, split_predicate
    from synth.store.evals import evals_dir, pass_rates_sql
    from synth.store.export.pass_band import PassBand, band_note

    rng = np.random.default_rng(0)
    ids = pa.array([f"item-{index:07d}" for index in range(count)])
    hops = rng.integers(2, 7, count)
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(home=Path(folder))
        items, attempts = Path(folder) / "items.parquet", evals_dir(settings) / "bench" / "attempts.parquet"
        attempts.parent.mkdir(parents=True)
        started = time.perf_counter()
        pq.write_table(
            pa.table(
                {
                    "id": ids,
                    "question": pa.array(
                        [f"Which film was directed by the person born in Town {i}?" for i in range(count)]
                    ),
                    "answer": pa.array([f"Film {i}" for i in range(count)]),
                    "hops": pa.array(hops),
                    "difficulty": pa.array(np.array(["easy", "medium", "hard", "unsolved"])[rng.integers(0, 4, count)]),
                    "metadata": pa.array(['{"style": "plain"}'] * count),
                }
            ),
            items,
        )
        pq.write_table(
            pa.table(
                {
                    "eval_id": pa.array(["bench"] * (count * samples)),
                    "item_id": pa.concat_arrays([ids] * samples),
                    "correct": pa.array(rng.random(count * samples) < np.tile(1 / (hops - 1), samples)),
                }
            ),
            attempts,
        )
        print(f"items {count:,}, attempts {count * samples:,} (written in {time.perf_counter() - started:.1f} s)")
        band = PassBand("bench", "policy", "bench@1", 0.1, 0.9, pass_rates_sql(settings, "bench"))
        split = split_predicate("train", "id", SplitFractions())
        path = str(items).replace("'", "''")
        with duckdb.connect() as connection:
            started = time.perf_counter()
            kept = connection.sql(f"select * from read_parquet('{path}') where {split} and {band.predicate('id')}")
            table = kept.to_arrow_table()
            selection = time.perf_counter() - started
        print(f"{'selection (split and band), rows read as Arrow':52} {selection:6.2f} s  ({table.num_rows:,} kept)")
        started = time.perf_counter()
        note = band_note(band, items, split)
        print(f"{'the note: below/inside/above by hops and label':52} {time.perf_counter() - started:6.2f} s")
        print(f"  {note[:160]}...")
        print(f"peak memory {peak_rss_mib():,.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--select", action="store_true", help="Measure the --pass-band selection instead.")
    parser.add_argument("--items", type=int, default=1_000_000, help="--select: items in the version.")
    parser.add_argument("--samples", type=int, default=1, help="--select: attempts per item in the eval.")
    args = parser.parse_args()
    if args.select:
        select(args.items, args.samples)
        return
    with tempfile.TemporaryDirectory() as home:
        settings = Settings(home=Path(home))
        items, trajectories = make(args.rows)
        publish_version(
            settings, VersionSpec(name="bench", recipe="multihop"), {"items": items, "trajectories": trajectories}
        )
        del items, trajectories
        with Catalog.open(settings, read_only=True) as catalog:
            version = catalog.resolve("bench")

        started = time.perf_counter()
        with open(Path(home) / "raw.jsonl", "w") as handle:  # the floor: stored messages written as they are
            request = ExportRequest(settings=settings, version=version, out=Path(home) / "raw.jsonl")
            for trajectory in training_trajectories(request, "selected"):
                handle.write(json.dumps([m.model_dump(exclude_none=True) for m in trajectory.messages]) + "\n")
        floor = time.perf_counter() - started
        print(f"rows {args.rows:,} (3 searches x 3 passages and an answer each)")
        print(f"{'raw messages (floor)':52} {args.rows / floor:>9,.0f} rows/s  ({floor:.2f} s)")
        cases = [
            ("sft", "sft.jsonl", None),
            ("sft", "sft.parquet", None),
            ("sharegpt", "lf.jsonl", None),
            ("sft", "sft-verl.jsonl", "verl-search"),
            ("searchr1-sft", "searchr1.jsonl", "searchr1"),
        ]
        for fmt, name, contract in cases:
            started = time.perf_counter()
            result = export_version(settings, "bench", fmt, Path(home) / name, contract=contract)
            seconds = time.perf_counter() - started
            label = f"{fmt} -> {name}" + (f" (--contract {contract})" if contract else "")
            print(
                f"{label:52} {result.rows / seconds:>9,.0f} rows/s  ({seconds:.2f} s, {floor / seconds:.2f} of the "
                "floor's speed)"
            )
        print(f"peak memory {peak_rss_mib():,.0f} MiB")


if __name__ == "__main__":
    main()

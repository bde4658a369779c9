"""Knowledge-graph import, load and walk speed, on the bundled graph and synthetic 1M/5M-edge graphs.

    python benchmarks/bench_kg.py [--sizes 1000000 5000000] [--walks 10000] [--keep DIR]

For each graph: `synth kg import` time from a TSV (lines/s), load time into a KnowledgeGraph (the
first load, which builds it from DuckDB and saves its arrays, and a later one, which maps them) and
the later loading process's peak memory (each load runs in a fresh process, so memory is the graph's
own), and the time of N constrained random walks (3 hops, hubs excluded, distinct relations).
Synthetic graphs have power-law endpoints (a few hubs, a long tail of rare entities) and
named entities, like real KGs. Targets: a 1M-edge graph loads in under 2 GiB and 10k walks take
under 5 s.
"""

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402


def synthetic_graph(folder: Path, edges: int, seed: int = 0) -> Path:
    """triples.tsv + entities.tsv: `edges` distinct edges over edges/5 named entities and 200
    relations, endpoints skewed by a power law (u**2.2: a few hubs, a long tail of rare entities)."""
    rng = np.random.default_rng(seed)
    entities = max(edges // 5, 10)
    drawn = int(edges * 1.2) + 100
    permutation = rng.permutation(entities)
    heads = permutation[(entities * rng.random(drawn) ** 2.2).astype(np.int64)]
    tails = permutation[::-1][(entities * rng.random(drawn) ** 2.2).astype(np.int64)]
    relations = (200 * rng.random(drawn) ** 2).astype(np.int64)
    keys = (heads * entities + tails) * 256 + relations
    _, first = np.unique(keys, return_index=True)
    keep = np.sort(first)[:edges]
    heads, relations, tails = heads[keep], relations[keep], tails[keep]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "triples.tsv", "w") as handle:
        handle.write("head\trelation\ttail\n")
        for start in range(0, len(heads), 500_000):
            chunk = slice(start, start + 500_000)
            handle.writelines(
                f"Q{head}\tr{relation}\tQ{tail}\n"
                for head, relation, tail in zip(heads[chunk].tolist(), relations[chunk].tolist(), tails[chunk].tolist())
            )
    with open(folder / "entities.tsv", "w") as handle:
        handle.write("id\tname\tdescription\n")
        handle.writelines(
            f"Q{index}\tEntity {index}\tA synthetic entity number {index}.\n" for index in range(entities)
        )
    return folder


def child_load_and_walk(path: str, walks: int) -> None:
    """In a fresh process: load the graph, walk, print JSON figures."""
    from synth.generators.kg_walk import RandomWalker, WalkConfig
    from synth.kg.snapshot import load_kg

    baseline = peak_rss_mib()
    started = time.perf_counter()
    kg = load_kg(path, Path(path).parent)
    _ = kg.degrees, kg.named  # what walkers need, built once
    load_seconds = time.perf_counter() - started
    load_peak = peak_rss_mib()
    walker = RandomWalker(kg, WalkConfig(), random.Random(0))
    started = time.perf_counter()
    made = sum(walker.walk(3) is not None for _ in range(walks))
    walk_seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "triples": kg.num_triples,
                "entities": kg.num_nodes,
                "load_s": load_seconds,
                "load_peak_mib": load_peak,
                "interpreter_mib": baseline,
                "adjacency_mib": kg.nbytes / 2**20,
                "walks": walks,
                "walks_completed": made,
                "walk_s": walk_seconds,
                "peak_mib": peak_rss_mib(),
            }
        )
    )


def measure(name: str, source: Path, kg_dir: Path, walks: int, loads: list[float]) -> dict:
    from synth.kg.importer import ImportSource, import_graph

    started = time.perf_counter()
    report = import_graph(name, ImportSource.from_folder(source), kg_dir, replace=True, log=lambda line: None)
    import_seconds = time.perf_counter() - started
    lines = sum(report.lines.values())
    runs = []
    for _ in range(2):  # the first load builds the graph from DuckDB and saves its arrays; the second maps them
        output = subprocess.run(
            [sys.executable, __file__, "--child", report.path, "--walks", str(walks)],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        runs.append(json.loads(output.strip().splitlines()[-1]))
    first, figures = runs
    loads.append(figures["load_s"])
    print(
        f"{name:>10} {figures['triples']:>10,} {figures['entities']:>9,} "
        f"{import_seconds:>8.1f} {lines / import_seconds:>10,.0f} {first['load_s']:>8.2f} "
        f"{figures['load_s']:>7.2f} {figures['load_peak_mib']:>9,.0f} {figures['adjacency_mib']:>8.1f} "
        f"{figures['walk_s']:>8.2f} {walks / figures['walk_s']:>8,.0f} {figures['walks_completed'] / walks:>6.0%}"
    )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000_000, 5_000_000])
    parser.add_argument("--walks", type=int, default=10_000)
    parser.add_argument("--keep", type=Path, help="Keep generated graphs here (default: a temporary folder).")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.child:
        child_load_and_walk(arguments.child, arguments.walks)
        return

    from synth.kg.snapshot import bundled_path

    with tempfile.TemporaryDirectory() as temporary:
        root = arguments.keep or Path(temporary)
        loads: list[float] = []
        print(
            f"{'graph':>10} {'triples':>10} {'entities':>9} {'import s':>8} {'lines/s':>10} {'1st load':>8} "
            f"{'load s':>7} {'peak MiB':>9} {'adj MiB':>8} {'walks s':>8} {'walks/s':>8} {'done':>6}"
        )
        measure("bundled", bundled_path(), root / "kg", arguments.walks, loads)
        for size in arguments.sizes:
            started = time.perf_counter()
            folder = synthetic_graph(root / f"synthetic-{size}", size)
            print(
                f"{'':>10} (made a {size:,}-edge synthetic TSV in {time.perf_counter() - started:.1f} s)",
                file=sys.stderr,
            )
            measure(
                f"synth-{size // 1_000_000 if size >= 1_000_000 else size}{'M' if size >= 1_000_000 else ''}",
                folder,
                root / "kg",
                arguments.walks,
                loads,
            )
    print("1st load: from DuckDB, saving the arrays; load s: memory-mapped from them, as every later run loads")
    print(
        "peak MiB: the loading process's peak resident memory (Python, numpy, DuckDB and the graph); "
        "targets: 1M edges < 2048 MiB, 10k walks < 5 s, 20M edges load < 10 s"
    )
    print(f"kg_load_s={loads[-1]:.2f}")


if __name__ == "__main__":
    main()

"""What orchestration costs: the same run through `synth generate`'s local stage runner and
through the Prefect flow (and, with --dask, on a local Dask cluster).

    python benchmarks/bench_flows.py [--items 64] [--shard-size 8] [--dask 2 [--bucket [s3://BUCKET/PREFIX]]]

The panel is the scripted `fake` model (no model time), so the figures are synth's and Prefect's
own overhead: seconds per run, items/s, and the flow's extra seconds per shard over the local
runner. Without PREFECT_API_URL the flow starts a temporary server (its start-up is reported
separately); --dask needs PREFECT_API_URL pointing at a running server, or each worker starts its own.
With --bucket, the Dask run is repeated on a data root in a bucket (SYNTH_HOME=s3://...; a SeaweedFS
server on loopback unless SYNTH_S3_ENDPOINT is set): every stage is saved to and read from the bucket.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402

from synth.config import apply_params  # noqa: E402
from synth.run.local import run_locally  # noqa: E402
from synth.run.prefect_env import configure_prefect  # noqa: E402
from synth.run.runner import RunRequest  # noqa: E402
from synth.settings import Settings  # noqa: E402

FLOWS = "models:\n  dry:\n    backend: fake\n"
PANEL = "panel.solvers=[{name: a, model: dry, k: 1}, {name: r, baseline: bm25_reader, conditions: [search], k: 1}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=64)
    parser.add_argument("--shard-size", type=int, default=8)
    parser.add_argument("--dask", type=int, default=0, help="also run on a local Dask cluster of this many workers")
    parser.add_argument(
        "--bucket",
        nargs="?",
        const="s3://synth-tests/bench-flows",
        help="with --dask: again with the data root in this bucket URL (default: a loopback SeaweedFS's)",
    )
    arguments = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-flows-"))
    flows_file = root / "flows.yaml"
    flows_file.write_text(FLOWS)
    config = apply_params({}, [f"n={arguments.items}", "seed=0", "hops=[2]", PANEL])
    shards = -(-arguments.items // arguments.shard_size)
    rows = []

    def measure(label: str, run) -> None:
        started = time.perf_counter()
        items = run()
        rows.append((label, time.perf_counter() - started, items))

    measure(
        "local runner",
        lambda: run_locally(
            Settings(home=root / "local"),
            RunRequest("multihop", config, flows_file=str(flows_file), shard_size=arguments.shard_size),
        ).row_counts["items"],
    )

    configure_prefect(Settings(home=root / "prefect-home"))
    started = time.perf_counter()
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:  # starts the temporary server when no PREFECT_API_URL
        client.api_healthcheck()
    server_seconds = time.perf_counter() - started
    from synth.run.flows import multihop_flow

    def flow(home: str, task_runner=None):
        return multihop_flow(
            config=config,
            dataset="bench",
            flows_file=str(flows_file),
            shard_size=arguments.shard_size,
            home=home if home.startswith("s3://") else str(root / home),
            task_runner=task_runner,
        )["items"]

    measure("prefect flow (one worker)", lambda: flow("prefect"))
    if arguments.dask:
        measure(
            f"prefect flow on dask ({arguments.dask} workers)",
            lambda: flow("dask", {"kind": "dask", "workers": arguments.dask}),
        )
    if arguments.dask and arguments.bucket:
        server = _bucket_server(root)
        try:
            measure(
                f"the same, data root in a bucket{' (loopback)' if server else ''}",
                lambda: flow(arguments.bucket, {"kind": "dask", "workers": arguments.dask}),
            )
        finally:
            if server is not None:
                server.stop()

    base = rows[0][1]
    print(
        f"\n{arguments.items} items, {shards} shards of {arguments.shard_size}, fake model; "
        f"Prefect server: {'PREFECT_API_URL' if os.environ.get('PREFECT_API_URL') else 'temporary'} "
        f"(ready in {server_seconds:.1f} s)"
    )
    print(f"{'path':>44} {'seconds':>8} {'items':>6} {'items/s':>8} {'extra s/shard':>14}")
    for label, seconds, items in rows:
        print(f"{label:>44} {seconds:8.2f} {items:6d} {items / seconds:8.1f} {(seconds - base) / shards:14.3f}")
    print(f"peak memory: {peak_rss_mib():.0f} MiB")


def _bucket_server(root: Path):
    """A SeaweedFS server on loopback with its bucket (synth-tests), its variables set for this process and
    the Dask workers it starts (they inherit them), unless SYNTH_S3_ENDPOINT names a server."""
    if os.environ.get("SYNTH_S3_ENDPOINT"):
        return None
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "store"))
    from seaweed import Seaweed

    server = Seaweed(root / "seaweed").start()
    os.environ.update(server.environ(SYNTH_LOCAL_HOME=str(root / "bucket-copy")))
    return server


if __name__ == "__main__":
    main()

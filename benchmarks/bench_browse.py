"""`synth browse` on a large version: how long its pages take, over HTTP, on a fresh server.

    python benchmarks/bench_browse.py [--rows 1000000] [--home DIR]

Publishes a version of `--rows` items (labels round-robin) and a second one derived from it (every
tenth item relabeled, a thousand removed and a thousand added), then serves `synth browse` on a
loopback port and times each page as a browser would fetch it: the first items page of a fresh
server (nothing cached), the same page again, the version page, a far page, a text search, a
label filter and a relation family filter (they scan the version), one item, and the diff of the
two versions. With `--home`,
the data root is kept and reused by the next run (publishing a million items takes minutes).
The issue's target: the first items page of a 1M-item version under a second on this machine.
"""

import argparse
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib, timed  # noqa: E402
from bench_store import make_items  # noqa: E402

from synth.browse.background import serving  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.catalog import Catalog  # noqa: E402
from synth.store.publish import VersionSpec, publish_version  # noqa: E402
from synth.store.reader import shard_glob  # noqa: E402

LABELS = ("trivial", "easy", "medium", "hard", "unsolved")


def derived(rows: int):
    """The first version's items but the first thousand, every tenth relabeled, and a thousand new ones."""
    for item in make_items(rows - 1000, LABELS, start=1000):
        number = int(item.id.rsplit("-", 1)[1])
        yield item.model_copy(update={"difficulty": "hard"}) if number % 10 == 0 else item
    yield from make_items(1000, LABELS, start=rows)


def publish(settings: Settings, rows: int) -> None:
    with Catalog.open(settings, read_only=True) as catalog:
        have = {version.ref: version.row_counts.get("items") for version in catalog.versions("big")}
    if have.get("big@1") == rows and "big@2" in have:
        print(f"reusing big@1 and big@2 ({rows} items) in {settings.home}")
        return
    if have:
        raise SystemExit(f"{settings.home} holds other `big` versions; give an empty --home")
    for spec, items in (
        (VersionSpec(name="big", recipe="multihop"), make_items(rows, LABELS)),
        (VersionSpec(name="big", recipe="curate", parent="big@1"), derived(rows)),
    ):
        started = time.perf_counter()
        version = publish_version(settings, spec, {"items": items})
        print(f"published {version.ref}: {version.row_counts['items']} items in {time.perf_counter() - started:.0f} s")


def fetch(url: str) -> int:
    with urllib.request.urlopen(url, timeout=120) as response:
        body = response.read()
        assert response.status == 200, (url, response.status)
    return len(body)


def raw_first_page(settings: Settings) -> None:
    """The first items page's reads straight from DuckDB: the backend's own speed."""
    import duckdb

    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve("big@1")
    parts = f"read_parquet('{shard_glob(settings, version, 'items')}')"
    connection = duckdb.connect(":memory:")
    connection.execute(f"select count(*) from {parts}").fetchall()
    connection.execute(f"select id, question, answer, hops, difficulty, recipe from {parts} limit 50").fetchall()
    for column in ("hops", "difficulty"):
        connection.execute(f"select {column}, count(*) from {parts} group by 1 order by 1").fetchall()
    connection.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--home", type=Path, help="keep the data root here and reuse it on the next run")
    arguments = parser.parse_args()
    rows = arguments.rows
    with tempfile.TemporaryDirectory() as scratch:
        settings = Settings(home=arguments.home or Path(scratch))
        publish(settings, rows)
        middle = f"item-{rows // 2:08d}"
        pages = [
            ("items, first page, fresh server", "/v/big%401/items"),
            ("items, first page again", "/v/big%401/items"),
            ("version page (funnel, labels by hops)", "/v/big%401"),
            ("items, page 10000", "/v/big%401/items?page=10000"),
            ("items, text search", "/v/big%401/items?q=town+number+424242+of"),
            ("items, label filter", "/v/big%401/items?difficulty=hard&page=3"),
            ("items, relation family filter", "/v/big%401/items?family=film&page=3"),
            ("one item", f"/v/big%401/items/{middle}"),
            ("diff of the two versions", "/diff?old=big%401&new=big%402"),
            ("datasets", "/"),
        ]
        results: dict[str, float] = {}
        with timed(results, "raw"):
            raw_first_page(settings)
        sizes = {}
        with serving(settings) as url:
            for title, path in pages:
                with timed(results, title):
                    sizes[title] = fetch(url + path)
    print(f"rows per version          {rows}")
    for title, _ in pages:
        print(f"{title:<40} {results[title] * 1000:>8.0f} ms  ({sizes[title] / 1024:.0f} KiB)")
    first = results["items, first page, fresh server"]
    print(
        f"raw DuckDB, same queries, one connection {results['raw'] * 1000:>8.0f} ms  -> the fresh page costs "
        f"{first / results['raw']:.1f}x (catalog lookup, sandboxed connections, rendering, HTTP)"
    )
    print(f"first page under a second: {'yes' if first < 1 else 'no'} ({first:.2f} s)")
    print(f"peak memory                {peak_rss_mib():>8.0f} MiB (publishing included)")


if __name__ == "__main__":
    main()

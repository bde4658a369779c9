"""Versions published exactly once in an S3-compatible bucket (a real SeaweedFS server on loopback, no
mock of the S3 API): racing publishers never both win a version number; a crash between writing
parts and committing leaves nothing visible, and the run's rerun publishes once; a fresh machine
finds every version from the bucket alone; a same-size change inside a part is caught by its hash;
wrong credentials, a stopped server and a throttling one (503 SlowDown) are one line naming what
to fix after retries with backoff, and a restarted server is used again."""

import sys
import threading
from pathlib import Path

import pytest

from synth.bucket import Bucket, manifests, parse_bucket_url, publish, verify, versions
from synth.errors import ConfigError, StoreError

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seaweed import Seaweed, seaweed_server  # noqa: E402, F401
from throttling_proxy import ThrottlingProxy  # noqa: E402


@pytest.fixture
def bucket(seaweed, request):
    """A fresh prefix of the test bucket per test."""
    return Bucket(f"s3://synth-tests/{request.node.name[:40]}", environ=seaweed.environ())


PARTS = {"items/part-00000.parquet": b"PAR1 items PAR1", "labels/part-00000.parquet": b"PAR1 labels PAR1"}


def built(number: int):
    """A version whose rows carry its number: a publisher that loses a number builds the next one."""
    return {"items/part-00000.parquet": f"rows of v{number}".encode()}, {"built_for": number}


def test_racing_publishers_never_share_a_version_and_each_run_publishes_once(bucket):
    won: dict[str, int] = {}

    def publisher(run: str) -> None:
        won[run] = publish(bucket, "race", run, built)

    threads = [threading.Thread(target=publisher, args=(f"run-{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won.values()) == list(range(1, 9))  # eight runs, eight numbers, none twice
    assert publish(bucket, "race", "run-3", built) == won["run-3"]  # a rerun: nothing new
    assert versions(bucket, "race") == list(range(1, 9))
    by_number = {manifest["version"]: manifest for manifest in manifests(bucket)}
    assert {by_number[number]["run_id"] for number in range(1, 9)} == set(won)
    for number, manifest in by_number.items():  # each committed version holds the parts built for its number
        assert manifest["built_for"] == number and verify(bucket, manifest) == []
        assert bucket.get(manifest["parts"]["items/part-00000.parquet"]["key"]) == f"rows of v{number}".encode()


def test_a_crash_before_the_commit_leaves_nothing_visible_and_the_rerun_publishes_once(bucket, seaweed):
    bucket.put("datasets/crashy/.parts/run-a/items/part-00000.parquet", b"written before the crash")
    assert versions(bucket, "crashy") == [] and manifests(bucket) == []
    fresh = Bucket(f"s3://{bucket.url.bucket}/{bucket.url.prefix}", environ=seaweed.environ())  # another machine
    assert publish(fresh, "crashy", "run-a", lambda number: (PARTS, {})) == 1
    assert publish(fresh, "crashy", "run-a", lambda number: (PARTS, {})) == 1
    (manifest,) = manifests(Bucket(f"s3://{bucket.url.bucket}/{bucket.url.prefix}", environ=seaweed.environ()))
    assert manifest["run_id"] == "run-a" and verify(bucket, manifest) == []


def test_a_same_size_change_inside_a_part_is_caught_by_its_hash(bucket):
    publish(bucket, "damaged", "run-b", lambda number: (PARTS, {}))
    (manifest,) = manifests(bucket)
    key = manifest["parts"]["items/part-00000.parquet"]["key"]
    original = bucket.get(key)
    assert original is not None
    bucket.put(key, original.replace(b"items", b"itemz"))  # same size, other bytes
    assert verify(bucket, manifest) == [
        f"items/part-00000.parquet: changed ({len(original)} bytes, hash differs from the manifest's)"
    ]


def test_parquet_in_the_bucket_is_read_in_place_by_duckdb_through_arrow(bucket):
    import duckdb
    import pyarrow as pa
    import pyarrow.dataset as ds
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"id": ["a", "b", "c"], "hops": [2, 3, 4]}), sink)
    publish(bucket, "parquet", "run-c", lambda number: ({"items/part-00000.parquet": sink.getvalue().to_pybytes()}, {}))
    (manifest,) = manifests(bucket)
    key = manifest["parts"]["items/part-00000.parquet"]["key"]
    items = ds.dataset(bucket.arrow_path(key), filesystem=bucket.arrow_filesystem(), format="parquet")
    with duckdb.connect() as connection:  # no httpfs extension: DuckDB scans the Arrow dataset
        connection.register("items", items)
        assert connection.sql("select sum(hops) from items where id != 'a'").fetchall() == [(7,)]


def test_wrong_credentials_name_the_variables_and_an_unreachable_bucket_is_one_line(seaweed, tmp_path):
    wrong = Bucket("s3://synth-tests/creds", environ=seaweed.environ(AWS_SECRET_ACCESS_KEY="not-the-secret"))
    with pytest.raises(ConfigError, match="refused the credentials .*AWS_SECRET_ACCESS_KEY") as refused:
        publish(wrong, "d", "run", lambda number: (PARTS, {}))
    assert "not-the-secret" not in str(refused.value) and "not-the-secret" not in repr(wrong)
    gone = Bucket(
        "s3://synth-tests/gone",
        environ={**seaweed.environ(), "SYNTH_S3_ENDPOINT": "http://127.0.0.1:9"},
        retry_seconds=2,
    )
    with pytest.raises(StoreError, match="failed for .* after retries with backoff .*SYNTH_S3_ENDPOINT"):
        gone.list("datasets/")
    with pytest.raises(ConfigError, match="is not a bucket URL"):
        parse_bucket_url("/data/synth")


def test_a_server_stopped_mid_run_is_reported_and_used_again_once_restarted(tmp_path):
    server = Seaweed(tmp_path / "restart").start()
    try:
        bucket = Bucket("s3://synth-tests/restart", environ=server.environ(), retry_seconds=3)
        assert publish(bucket, "d", "run-1", lambda number: (PARTS, {})) == 1
        server.stop()
        with pytest.raises(StoreError, match="after retries with backoff"):
            publish(bucket, "d", "run-2", lambda number: (PARTS, {}))
        server.start()
        assert publish(bucket, "d", "run-2", lambda number: (PARTS, {})) == 2 and versions(bucket, "d") == [1, 2]
    finally:
        server.stop()


def test_a_bucket_that_does_not_exist_is_one_line(seaweed):
    with pytest.raises(ConfigError, match="s3://no-such-bucket does not exist .* create the bucket first"):
        versions(Bucket("s3://no-such-bucket/x", environ=seaweed.environ()), "d")


def test_a_throttling_bucket_is_retried_with_backoff_and_reported_in_one_line(seaweed):
    """503 SlowDown, as S3 answers a prefix under too many requests: a few are retried away (a put, a
    conditional put and a read each get through), and a bucket that keeps throttling past the retry
    budget is one line that says so."""
    proxy = ThrottlingProxy(seaweed.endpoint)
    try:
        environ = seaweed.environ(SYNTH_S3_ENDPOINT=proxy.endpoint)
        bucket = Bucket("s3://synth-tests/throttled", environ=environ, retry_seconds=3)
        proxy.throttle(3)
        bucket.put("a/one.json", b"{}")
        assert proxy.throttled == 3 and proxy.passed == 1
        proxy.throttle(2)
        assert bucket.create("a/two.json", b"{}") and not bucket.create("a/two.json", b"{}")
        proxy.throttle(2)
        assert bucket.get("a/one.json") == b"{}" and proxy.throttled == 7
        proxy.always = True
        with pytest.raises(StoreError) as throttled:
            bucket.list("a/")
        message = str(throttled.value)
        assert "after retries with backoff" in message and len(message.splitlines()) == 1
        assert proxy.throttled > 9  # retried, not given up at the first 503
    finally:
        proxy.stop()

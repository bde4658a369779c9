"""A data root in a bucket (`SYNTH_HOME=s3://...`, synth.store.bucket_root), against a real SeaweedFS
server on loopback: machines that share only the bucket see each other's versions; publishers on
several machines racing for one dataset never share a number and each version's rows carry its own;
a crash before the commit publishes nothing and the rerun publishes once; a part changed in the
bucket is named in one line and its version left out, not fatal; a machine that loses its local
folder gets everything back from the bucket; and the CLI does all of it with SYNTH_HOME alone."""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from synth.bucket import Bucket, manifests
from synth.settings import Settings
from synth.store.bucket_root import pull, verify_bucket
from synth.store.catalog import Catalog
from synth.store.publish import VersionSpec, publish_version
from synth.store.reader import iter_records

sys.path.insert(0, str(Path(__file__).resolve().parent))
from seaweed import Seaweed, seaweed_server  # noqa: E402, F401


@pytest.fixture
def machines(seaweed, tmp_path, request, monkeypatch):
    """`machine(NAME)`: the settings of one machine on a fresh prefix of the test bucket, with its own
    local folder; the bucket's variables are set as a user sets them."""
    for variable, value in seaweed.environ().items():
        monkeypatch.setenv(variable, value)
    url = f"s3://synth-tests/{request.node.name[:40]}"
    return lambda name: Settings(home=url, local_home=tmp_path / name)


def _spec(run_id: str) -> VersionSpec:
    return VersionSpec(name="shared", recipe="multihop", summary={"run_id": run_id})


def _versions(settings: Settings) -> dict[str, int]:
    with Catalog.open(settings, read_only=True) as catalog:
        return {version.ref: version.row_counts["items"] for version in catalog.versions()}


def test_machines_sharing_only_the_bucket_see_each_others_versions(machines, make_item):
    first, second = machines("a"), machines("b")
    published = publish_version(first, _spec("run-1"), {"items": [make_item(0), make_item(1)]})
    assert published.ref == "shared@1" and first.bucket == second.bucket and first.home != second.home
    report = pull(second)
    assert report.pulled == ["shared@1"] and not report.damaged
    with Catalog.open(second, read_only=True) as catalog:
        (version,) = catalog.versions()
    assert [item.id for item in iter_records(second, version, "items")] == ["item-0", "item-1"]
    again = publish_version(second, _spec("run-2"), {"items": [make_item(2)]})
    assert again.version == 2
    pull(first)
    assert _versions(first) == {"shared@1": 2, "shared@2": 1}


def test_racing_publishers_on_several_machines_never_share_a_number(machines, make_item):
    won: dict[str, int] = {}

    def publisher(index: int) -> None:
        settings = machines(f"racer-{index}")
        won[f"run-{index}"] = publish_version(
            settings, _spec(f"run-{index}"), {"items": iter([make_item(index)])}
        ).version

    threads = [threading.Thread(target=publisher, args=(index,)) for index in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(won.values()) == [1, 2, 3, 4, 5]
    reader = machines("reader")
    pull(reader)
    with Catalog.open(reader, read_only=True) as catalog:
        versions = catalog.versions("shared")
    for version in versions:  # each version's rows carry its own number, even for a publisher that lost one
        (item,) = iter_records(reader, version, "items")
        assert won[version.summary["run_id"]] == version.version and item.id == f"item-{version.summary['run_id'][4:]}"
        rows = pq.read_table(reader.home / version.path / "items").column("version").to_pylist()
        assert rows == [version.version]
    assert publish_version(machines("racer-0"), _spec("run-0"), {"items": [make_item(0)]}).version == won["run-0"]


def test_a_crash_before_the_commit_publishes_nothing_and_the_rerun_publishes_once(machines, make_item, monkeypatch):
    settings = machines("a")

    def crash(self, path, data):
        raise KeyboardInterrupt("killed before the manifest was committed")

    with monkeypatch.context() as patch:
        patch.setattr(Bucket, "create", crash)
        with pytest.raises(KeyboardInterrupt):
            publish_version(settings, _spec("run-1"), {"items": [make_item(0)]})
    fresh = machines("fresh")
    assert pull(fresh).pulled == [] and _versions(fresh) == {}
    assert publish_version(settings, _spec("run-1"), {"items": [make_item(0)]}).version == 1
    assert publish_version(settings, _spec("run-1"), {"items": [make_item(0)]}).version == 1  # nothing twice
    pull(fresh)
    assert _versions(fresh) == {"shared@1": 1}


def test_a_part_changed_in_the_bucket_is_named_and_its_version_left_out(machines, make_item, capsys):
    settings = machines("a")
    publish_version(settings, _spec("run-1"), {"items": [make_item(0)]})
    publish_version(settings, _spec("run-2"), {"items": [make_item(1)]})
    bucket = Bucket(settings.bucket)
    manifest = next(manifest for manifest in manifests(bucket) if manifest["version"] == 1)
    key = manifest["parts"]["items/part-00000.parquet"]["key"]
    data = bucket.get(key)
    assert data is not None
    bucket.put(key, data[:-12] + bytes(byte ^ 1 for byte in data[-12:-8]) + data[-8:])  # same size, other bytes
    assert verify_bucket(settings)["shared@1"] == [
        f"items/part-00000.parquet: changed ({len(data)} bytes, hash differs from the manifest's)"
    ]
    fresh = machines("fresh")
    report = pull(fresh)
    assert report.pulled == ["shared@2"]
    (line,) = report.damaged
    assert line.startswith("shared@1 in s3://") and "items/part-00000.parquet changed" in line
    assert "warning: shared@1" in capsys.readouterr().err
    assert _versions(fresh) == {"shared@2": 1}


def test_a_machine_that_lost_its_local_folder_gets_everything_back(machines, make_item):
    import shutil

    settings = machines("a")
    publish_version(settings, _spec("run-1"), {"items": [make_item(0), make_item(1)]})
    shutil.rmtree(settings.home)
    pull(settings)
    assert _versions(settings) == {"shared@1": 2}


def test_the_cli_runs_on_a_bucket_from_synth_home_alone(seaweed, tmp_path):
    """`synth generate` on one machine, `datasets list`, `sql`, `export`, `eval` and `audit sample` on
    another, and a third sees what the second stored."""
    environ = {**os.environ, **seaweed.environ(), "SYNTH_HOME": "s3://synth-tests/cli"}

    def synth(machine: str, *arguments: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [str(Path(sys.executable).with_name("synth")), *arguments],
            env={**environ, "SYNTH_LOCAL_HOME": str(tmp_path / machine)},
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    synth("a", "generate", "--recipe", "multihop", "--n", "4", "--param", "panel.enabled=false", "--name", "cli")
    listed = synth("b", "datasets", "list", "--json")
    assert '"name": "cli"' in listed.stdout and "copied 1 version(s) from s3://synth-tests/cli" in listed.stderr
    assert "4" in synth("b", "sql", "select count(*) from items where dataset = 'cli'").stdout
    synth("b", "export", "cli", "--format", "searchr1", "--out", str(tmp_path / "cli.parquet"))
    assert (tmp_path / "cli.parquet").stat().st_size > 0
    assert "1 version(s) checked" in synth("c", "datasets", "verify").stdout  # a third machine, bucket included
    # an eval and an audit sample stored on one machine are seen on another
    synth("b", "eval", "fake", "cli", "--split", "all")
    synth("b", "audit", "sample", "cli", "--n", "2", "--out", str(tmp_path / "sheets"))
    counted = synth("c", "sql", "select count(*) as evals from eval_runs", "--json").stdout
    assert json.loads(counted) == [{"evals": 1}] and len(json.loads(synth("c", "evals", "list", "--json").stdout)) == 1
    assert list((tmp_path / "c" / "datasets" / ".audits" / "samples").glob("*.json"))
    # the run made on machine a is listed on c, and comes back when c rebuilds its catalog
    made = json.loads(synth("c", "runs", "list", "--json").stdout)
    assert [(run["dataset"], run["status"]) for run in made] == [("cli", "published")]
    (tmp_path / "c" / "synth.duckdb").unlink()
    synth("c", "datasets", "reindex")
    assert json.loads(synth("c", "runs", "list", "--json").stdout) == made
    assert "AWS_SECRET_ACCESS_KEY" not in listed.stdout and seaweed.environ()["AWS_SECRET_ACCESS_KEY"] not in (
        listed.stdout + listed.stderr
    )


def test_an_answer_one_machine_paid_for_is_not_paid_again_on_another(machines):
    """The response cache is shared through the bucket: a request answered on one machine (written to
    the bucket before the call counts as answered) is answered from the cache on any other; a new
    request is still sent."""
    import asyncio

    from synth.llm.client import LLMClient
    from synth.llm.fake import ScriptedBackend
    from synth.llm.session import response_cache
    from synth.llm.types import ChatRequest

    def ask(settings: Settings, questions: list[str]) -> tuple[list[str], int]:
        backend = ScriptedBackend(default=lambda request: f"answer to {request.messages[0]['content']}")
        client = LLMClient(backend, cache=response_cache(settings))
        requests = [ChatRequest(messages=[{"role": "user", "content": question}]) for question in questions]
        results = asyncio.run(client.complete(requests))
        return [result.text for result in results], len(backend.requests)

    first, second = machines("a"), machines("b")
    assert ask(first, ["q1", "q2"]) == (["answer to q1", "answer to q2"], 2)
    assert ask(second, ["q1", "q2", "q3"]) == (["answer to q1", "answer to q2", "answer to q3"], 1)
    assert ask(second, ["q3"])[1] == 0 and ask(first, ["q3"])[1] == 0


def test_sql_export_and_browse_answer_the_same_on_a_bucket_as_on_a_local_copy(machines, make_item, tmp_path):
    """The same items published to a local data root and to a bucket (read from a second machine):
    `synth sql`, `synth export` and the `synth browse` pages give the same answers."""
    from starlette.testclient import TestClient

    from synth.browse.app import make_app
    from synth.browse.guard import LOOPBACK_NAMES
    from synth.store.export import export_version
    from synth.store.query import run_query

    items = [make_item(index) for index in range(7)]
    local = Settings(home=tmp_path / "local-root")
    publish_version(local, _spec("run-1"), {"items": items})
    publish_version(machines("a"), _spec("run-1"), {"items": items})
    reader = machines("b")
    pull(reader, quiet=True)
    answers = []
    for name, settings in (("local", local), ("bucket", reader)):
        query = run_query(
            settings, "select id, answer, hops from items where question like '%Town 3%' or id < 'item-2'"
        )
        out = tmp_path / f"{name}.parquet"
        export_version(settings, "shared", "searchr1", out)
        client = TestClient(make_app(settings, page_size=3, allowed_hosts=[*LOOPBACK_NAMES, "testserver"]))
        pages = [client.get(path) for path in ("/v/shared@1/items?page=2", "/v/shared@1/items/item-3")]
        assert all(page.status_code == 200 for page in pages)
        answers.append((query.rows, pq.read_table(out).to_pylist(), [page.text for page in pages]))
    rows = sorted(answers[0][0])
    assert answers[0] == answers[1] and rows == [
        ("item-0", "Film 0", 2),
        ("item-1", "Film 1", 2),
        ("item-3", "Film 3", 2),
    ]
    assert len(answers[0][1]) >= 5 and "Film 3" in answers[0][2][1]  # the train split, by item id


def test_a_stage_whose_upload_failed_is_done_nowhere_and_is_saved_once_the_bucket_is_back(tmp_path, monkeypatch):
    """A run's stages in the bucket (synth.store.run_mirror): a second machine opening the same run
    gets the same run id and sees the saved stages; a save while the server is down fails in one
    line and leaves the stage not done on this machine either; once the server is back it is saved."""
    from synth.errors import StoreError
    from synth.store.workdir import RunDir, StageOutput

    server = Seaweed(tmp_path / "own").start()
    try:
        for variable, value in server.environ(SYNTH_S3_RETRY_S="2").items():
            monkeypatch.setenv(variable, value)
        url = "s3://synth-tests/stages"
        run = RunDir.open(Settings(home=url, local_home=tmp_path / "a"), "multihop", "d", {"seed": 1})
        run.save("construct", StageOutput(meta={"n": 1}))
        again = RunDir.open(Settings(home=url, local_home=tmp_path / "c"), "multihop", "d", {"seed": 1})
        assert again.id == run.id and again.stages() == ["construct"] and again.meta("construct") == {"n": 1}
        server.stop()
        with pytest.raises(StoreError, match="after retries with backoff") as failed:
            run.save("attempt-00000", StageOutput(meta={"n": 2}))
        assert len(str(failed.value).splitlines()) == 1 and not (run.root / "attempt-00000" / "stage.json").exists()
        server.start()
        other = RunDir.attach(Settings(home=url, local_home=tmp_path / "b"), run.id)
        assert other.stages() == ["construct"]
        run.save("attempt-00000", StageOutput(meta={"n": 2}))
        other.refresh()
        assert other.stages() == ["attempt-00000", "construct"] and other.meta("attempt-00000") == {"n": 2}
        # the run's row, kept beside its stages, is what a fresh machine's rebuilt catalog lists
        from datetime import UTC, datetime

        from synth.schemas import RunRecord
        from synth.store.reindex import reindex

        row = RunRecord(run_id=run.id, dataset="d", recipe="multihop", status="running", started_at=datetime.now(UTC))
        run.write_record(row)
        fresh = Settings(home=url, local_home=tmp_path / "d")
        assert reindex(fresh).runs_restored == 1
        with Catalog.open(fresh, read_only=True) as catalog:
            assert catalog.run(run.id) == row
        run.release()
        again.release()
    finally:
        server.stop()

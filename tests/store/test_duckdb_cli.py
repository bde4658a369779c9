"""The catalog opens in the DuckDB command line a user installs today (the 1.x line on the package
index, `duckdb-cli`), not only in the DuckDB library synth writes it with, and runs a join over the
published Parquet through the catalog's views."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from synth.schemas import DifficultyLabel
from synth.store.publish import VersionSpec, publish_version


def duckdb_cli() -> str:
    found = shutil.which("duckdb", path=str(Path(sys.executable).parent)) or shutil.which("duckdb")
    if found is None:
        pytest.skip("needs the DuckDB CLI (the test extra installs duckdb-cli)")
    return found


def test_the_duckdb_cli_opens_the_catalog_and_joins_items_with_labels(settings, make_item):
    cli = duckdb_cli()
    items = [make_item(index) for index in range(3)]
    labels = [DifficultyLabel(item_id=item.id, label="hard", thresholds="v1") for item in items]
    publish_version(settings, VersionSpec(name="browse", recipe="multihop"), {"items": items, "labels": labels})
    version = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout
    query = (
        "select v.name, v.version, i.question, l.label from items i join labels l on l.item_id = i.id "
        "join versions v on v.name = i.dataset and v.version = i.version order by i.question"
    )
    done = subprocess.run(
        [cli, "-readonly", "-json", "synth.duckdb", "-c", query],
        cwd=settings.home,  # the views name the Parquet files relative to the data root
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"{version}: {done.stderr}"
    rows = json.loads(done.stdout)
    assert [row["question"] for row in rows] == sorted(item.question for item in items)
    assert {(row["name"], row["version"], row["label"]) for row in rows} == {("browse", 1, "hard")}

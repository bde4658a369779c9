"""What `synth datasets show` prints: lineage, funnel, difficulty histogram, example rows, the
items a curation removed (their verdicts carry the question), and the version's audits."""

import json
from typing import Any

from synth.settings import Settings
from synth.store.audits import version_audits
from synth.store.catalog import Catalog
from synth.store.reader import shard_glob

DIFFICULTY_ORDER = ["trivial", "easy", "medium", "hard", "unsolved", "unlabeled"]


def describe_version(settings: Settings, ref: str, examples: int = 3) -> dict[str, Any]:
    import duckdb

    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref)
    items = str(shard_glob(settings, version, "items")).replace("'", "''")
    connection = duckdb.connect()
    try:
        histogram = dict(
            connection.execute(
                f"select difficulty, count(*) from read_parquet('{items}') group by difficulty"
            ).fetchall()
        )
        hops = dict(
            connection.execute(
                f"select hops, count(*) from read_parquet('{items}') group by hops order by hops"
            ).fetchall()
        )
        cursor = connection.execute(
            f"select id, question, answer, hops, difficulty from read_parquet('{items}') limit ?", [examples]
        )
        columns = [column[0] for column in cursor.description]
        example_rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
        verdicts = str(shard_glob(settings, version, "verdicts")).replace("'", "''")
        removed = [
            {"filter": name, "reason": reason, "item_id": item_id, "question": json.loads(details).get("question")}
            for name, reason, item_id, details in connection.execute(
                f"select filter, reason, item_id, details from read_parquet('{verdicts}') "
                "where not kept and details like '%\"question\"%' order by filter, reason, item_id"
            ).fetchall()
        ]
    finally:
        connection.close()
    return {
        "version": version.model_dump(mode="json"),
        "difficulty": {label: histogram[label] for label in DIFFICULTY_ORDER if label in histogram},
        "hops": hops,
        "examples": example_rows,
        "removed": removed,
        "audits": [run.model_dump(mode="json") for run in version_audits(settings, version.name, version.version)],
    }

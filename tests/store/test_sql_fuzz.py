"""`synth sql` holds against every table function and PRAGMA DuckDB has, crossed with paths outside
the data root and planted SQL inside it: nothing is written anywhere, nothing outside is read,
and the data root's absolute path is never shown (issue 37 item 1). Also: a bounded row count, a
time limit, one statement at a time."""

import json
from pathlib import Path

import duckdb
import pytest

from synth.errors import CatalogError
from synth.store.publish import VersionSpec, publish_version
from synth.store.query import run_query

CANARY = "CANARY-5f1e-outside-the-data-root"


@pytest.fixture
def world(settings, make_item, tmp_path):
    publish_version(settings, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(0), make_item(1)]})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text(CANARY + "\n")
    (outside / "secret.csv").write_text(f"a\n{CANARY}\n")
    # SQL planted inside the datasets folder, as an attacker with write access to one folder would
    planted = settings.datasets_dir / "demo" / "planted"
    planted.mkdir(parents=True)
    (planted / "schema.sql").write_text(f"CREATE TABLE pwned AS SELECT '{CANARY}' AS x;\n")
    # writing inside the datasets folder is what DuckDB's own sandbox allows: overwrite a part, add a file
    [part] = (settings.datasets_dir / "demo").rglob("items/*.parquet")
    load = f"COPY (SELECT 1 AS x) TO '{part}' (FORMAT parquet);\nCOPY (SELECT 1) TO '{outside / 'written.csv'}';\n"
    (planted / "load.sql").write_text(load)
    return settings, outside, planted


def snapshot(*folders: Path) -> dict[str, tuple[int, int]]:
    return {
        str(path): (path.stat().st_size, path.stat().st_mtime_ns)
        for folder in folders
        for path in folder.rglob("*")
        if path.is_file() and path.suffix not in (".wal",)
    }


def statements(outside: Path, planted: Path, inside: Path) -> list[str]:
    with duckdb.connect() as connection:
        table = [row[0] for row in connection.execute(
            "select distinct function_name from duckdb_functions() where function_type = 'table' order by 1"
        ).fetchall()]  # fmt: skip
        pragmas = [row[0] for row in connection.execute(
            "select distinct function_name from duckdb_functions() where function_type = 'pragma' order by 1"
        ).fetchall()]  # fmt: skip
    paths = [str(outside / "secret.txt"), str(outside / "secret.csv"), str(planted), str(outside / "new.parquet")]
    made = []
    for index, name in enumerate(table):
        path = paths[index % len(paths)]
        made += [f"select * from {name}('{path}')", f"select count(*) from {name}('{path}')"]
    for index, name in enumerate(pragmas):
        path = paths[index % len(paths)]
        made += [f"pragma {name}('{path}')", f"pragma {name}", f"call {name}('{path}')"]
    for path in [*paths, str(inside / "x.parquet")]:
        made += [
            f"copy (select 1) to '{path}'",
            f"select * from query('copy (select 1) to ''{path}''')",
            f"attach '{path}' as other",
            f"export database '{Path(path).parent / 'exported'}'",
            f"pragma import_database('{planted}')",
            f"import database '{planted}'",
            f"select * from '{path}'",
            f"explain select * from read_text('{path}')",
            f"with t as (select * from read_csv('{path}')) select * from t",
            f"select (select count(*) from glob('{Path(path).parent}/*'))",
            f"select 1 union all select count(*) from read_blob('{path}')",
            f"/* comment */ pragma import_database('{planted}')",
            f"select 1; copy (select 1) to '{path}'",
        ]
    return made


@pytest.mark.slow  # hundreds of statements
def test_no_statement_writes_anything_or_reads_outside(world, tmp_path):
    settings, outside, planted = world
    inside = settings.datasets_dir / "demo"
    made = statements(outside, planted, inside)
    assert len(made) >= 300
    before = snapshot(outside, settings.home)
    home = str(settings.home.absolute())
    answered = refused = 0
    for sql in made:
        try:
            result = run_query(settings, sql, limit=50, timeout_s=20)
            shown = json.dumps([result.columns, result.rows], default=str)
            answered += 1
        except CatalogError as error:
            shown = str(error)
            refused += 1
        assert CANARY not in shown, sql
        assert home not in shown, sql
    assert snapshot(outside, settings.home) == before  # nothing written, inside the data root or out of it
    assert not (outside / "written.csv").exists() and not (outside / "new.parquet").exists()
    assert refused > answered > 0


def test_rows_are_bounded_and_counted_and_one_statement_runs(world):
    settings = world[0]
    result = run_query(settings, "select * from range(100000)", limit=25)
    assert len(result.rows) == 25 and result.total == 100_000 and result.truncated
    with pytest.raises(CatalogError, match="one statement at a time and got 2"):
        run_query(settings, "select 1; select 2")


def test_a_query_past_its_time_limit_is_stopped_in_one_line(world, run_cli):
    code, _, err = run_cli("sql", "select count(*) from range(10000000000000)", "--timeout", "1")
    assert code != 0 and "ran past --timeout 1 s" in err and len(err.strip().splitlines()) == 1


def test_the_cli_says_how_many_rows_it_left_out(world, run_cli):
    code, out, err = run_cli("sql", "select * from range(5000)", "--json", "--limit", "10")
    assert code == 0 and len(json.loads(out)) == 10 and "showing 10 of 5,000 rows" in err


def test_file_borne_sql_is_never_run(world):
    """PRAGMA import_database runs a folder's schema.sql and load.sql behind every statement check;
    before, it answered "Success" with planted files under the datasets folder."""
    settings, _, planted = world
    for sql in (f"pragma import_database('{planted}')", f"PRAGMA   Import_Database ('{planted}')"):
        with pytest.raises(CatalogError, match="PRAGMA import_database is refused"):
            run_query(settings, sql)

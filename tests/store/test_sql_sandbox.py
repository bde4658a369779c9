"""`synth sql` reads the catalog and the datasets' Parquet, and nothing else: no file outside the
datasets folder is read or written, no URL is fetched, no setting or extension is touched."""

import pytest

from synth.store.publish import VersionSpec, publish_version


@pytest.fixture
def published(settings, make_item):
    return publish_version(
        settings, VersionSpec(name="demo", recipe="multihop"), {"items": [make_item(0), make_item(1)]}
    )


@pytest.mark.parametrize(
    "query",
    [
        "explain analyze copy (select 1) to '{out}'",
        "/* hidden */ EXPLAIN ANALYZE select 1",
        "copy items to '{out}'",
        "select * from read_text('/etc/passwd')",
        "select * from read_csv('https://example.com/data.csv')",
        "select * from read_parquet('s3://bucket/part.parquet')",
        "set enable_external_access = true",
        "attach '{out}' as other",
        "install httpfs",
        "load httpfs",
        "select 1; copy (select 1) to '{out}'",
    ],
)
def test_writes_outside_reads_settings_and_extensions_are_refused_in_one_line(published, run_cli, tmp_path, query):
    out = tmp_path / "written"
    code, stdout, err = run_cli("sql", query.format(out=out))
    assert code != 0 and stdout == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ")
    assert not out.exists()


def test_views_and_the_datasets_parquet_stay_readable(published, run_cli, settings):
    code, out, _ = run_cli("sql", "select count(*) as n from items", "--json")
    assert code == 0 and '"n": 2' in out
    part = settings.home.absolute() / published.path / "items" / "*.parquet"
    code, out, _ = run_cli("sql", f"select count(*) as n from read_parquet('{part}')", "--json")
    assert code == 0 and '"n": 2' in out
    code, out, _ = run_cli("sql", "explain select * from items")
    assert code == 0


def test_a_query_spills_only_into_a_bounded_private_folder_outside_the_data_root(published, settings):
    """Before, a long sort spilled ~1.5 GB into $SYNTH_HOME/synth.duckdb.tmp, beside the published data."""
    from pathlib import Path

    from synth.store.query import run_query

    [(folder, cap, memory)] = run_query(
        settings,
        "select current_setting('temp_directory'), current_setting('max_temp_directory_size'), "
        "current_setting('memory_limit')",
    ).rows
    assert not Path(folder).is_relative_to(settings.home.absolute()) and "synth-query-spill-" in folder
    assert not Path(folder).exists()  # removed once the query ended
    assert cap.startswith("3.7 GiB") and memory.startswith("1.8 GiB")  # 4 GB and 2 GB, as DuckDB prints them


def test_queries_too_long_to_parse_cheaply_are_refused_before_parsing(published, run_cli):
    code, _, err = run_cli("sql", "select 1 as one" + " " * 100_000)
    assert code != 0 and "characters, over the 100,000" in err and len(err.strip().splitlines()) == 1
    code, _, err = run_cli("sql", " union all ".join(["select 1"] * 1_500))
    assert code != 0 and "1,499 unions, over the 1,000" in err
    code, out, _ = run_cli("sql", " union all ".join(["select 1"] * 900), "--json")
    assert code == 0 and len(out) > 0  # within the bound: answered

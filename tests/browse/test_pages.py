"""`synth browse` pages over HTTP on the store of conftest.py: every page renders from the store,
filters and pages are DuckDB's, untrusted text is escaped, and nothing but reading is served."""

import pytest
from starlette.testclient import TestClient

from synth.browse.app import make_app
from synth.settings import Settings


@pytest.fixture
def client(store):
    return TestClient(make_app(store, page_size=3))


def test_the_datasets_page_lists_versions_and_a_version_page_its_lineage_and_funnel(client):
    index = client.get("/")
    assert index.status_code == 200 and "films@1" in index.text
    version = client.get("/v/films@1")
    assert version.status_code == 200
    assert "ambiguous: 12" in version.text and "served:test" in version.text
    assert 'title="unsolved: 4"' in version.text and 'title="medium: 4"' in version.text  # 1 and 2 hops


def test_items_are_filtered_and_paged_by_the_store(client):
    everything = client.get("/v/films@1/items")
    assert "8 matching items" in everything.text
    assert "page 1 of 3" in everything.text and 'rel="next"' in everything.text
    last = client.get("/v/films@1/items", params={"page": 3})
    assert last.text.count("/items/item-") == 2 and 'rel="next"' not in last.text
    assert "item-6" in last.text and 'rel="prev"' in last.text
    assert "page 3 of 3" in client.get("/v/films@1/items", params={"page": 99}).text
    assert "4 matching items" in client.get("/v/films@1/items", params={"hops": 1}).text  # items 0, 2, 4, 6
    assert "4 matching items" in client.get("/v/films@1/items", params={"difficulty": "medium"}).text
    text = client.get("/v/films@1/items", params={"q": "number 5"})
    assert "1 matching items" in text.text and "Film 5" in text.text
    assert "0 matching items" in client.get("/v/films@1/items", params={"q": "100%"}).text  # % is literal


def test_an_item_page_shows_its_facts_and_untrusted_text_is_escaped(client):
    item = client.get("/v/films@1/items/item-7")
    assert item.status_code == 200
    assert "<script>alert" not in item.text and "&lt;script&gt;alert" in item.text
    assert "<script>alert" not in client.get("/v/films@1/items").text
    attempted = client.get("/v/films@1/items/item-1")
    assert "directed" in attempted.text and "served" in attempted.text and "/trajectories/t-item-1" in attempted.text


def test_a_trajectory_page_renders_the_conversation(client):
    page = client.get("/v/films@1/trajectories/t-item-1")
    assert page.status_code == 200
    assert "I should search for the director first." in page.text and "<details" in page.text
    assert "&#34;query&#34;: &#34;film number 1&#34;" in page.text  # the call's arguments, escaped
    assert "Doc 1(Title: Film 1)" in page.text and "reward" in page.text


def test_unknown_versions_items_and_trajectories_are_404_and_nothing_writes(client):
    assert client.get("/v/nope@3").status_code == 404
    assert client.get("/v/films@1/items/nope").status_code == 404
    assert client.get("/v/films@1/trajectories/nope").status_code == 404
    assert client.post("/v/films@1/items").status_code == 405
    assert client.get("/static/../../etc/passwd").status_code == 404


def test_the_sql_console_reads_and_refuses_to_write(client):
    read = client.get("/sql", params={"q": "select hops, count(*) as n from items group by hops order by hops"})
    assert read.status_code == 200 and "2 rows" in read.text and 'id="error"' not in read.text
    for write in ("create table x as select 1", "copy items to 'out.csv'", "select * from read_text('/etc/passwd')"):
        refused = client.get("/sql", params={"q": write})
        assert refused.status_code == 200 and 'id="error"' in refused.text, write
    assert client.get("/sql").status_code == 200  # the empty console


def test_a_multihop_items_chain_is_drawn_with_the_names_of_its_graph(tmp_path):
    from synth.generate import generate
    from synth.store.reader import iter_records

    settings = Settings(home=tmp_path)
    version = generate(settings, "multihop", ["n=2", "seed=1", "panel.enabled=false"], llm="fake").version
    item = next(iter_records(settings, version, "items"))
    page = TestClient(make_app(settings)).get(f"/v/{version.ref}/items/{item.id}")
    assert page.status_code == 200
    assert f'title="{item.path[0].head}"' in page.text and f">{item.answer}</span>" in page.text  # a name, not an id
    assert item.cues and "(admits " in page.text  # each cue with how many entities it admits

"""`synth browse` pages over HTTP on the store of conftest.py: every page renders from the store,
filters and pages are DuckDB's, untrusted text is escaped, and nothing but reading is served."""

import pytest
from starlette.testclient import TestClient

from synth.browse.app import make_app
from synth.browse.guard import LOOPBACK_NAMES
from synth.schemas import DatasetVersion
from synth.settings import Settings


@pytest.fixture
def client(store):
    """The app as `synth browse --allow-host testserver` serves it (TestClient's requests name that host)."""
    return TestClient(make_app(store, page_size=3, allowed_hosts=[*LOOPBACK_NAMES, "testserver"]))


def test_the_datasets_page_lists_versions_and_a_version_page_its_lineage_and_funnel(client):
    index = client.get("/")
    assert index.status_code == 200 and "films@1" in index.text
    version = client.get("/v/films@1")
    assert version.status_code == 200
    assert "ambiguous: 12" in version.text and "served:test" in version.text
    assert "<title>unsolved: 4</title>" in version.text and "<title>medium: 4</title>" in version.text  # 1 and 2 hops
    summary = version.text.split('id="summary"')[1].split("</table>")[0]
    assert "<th>seconds</th><td>12.5</td>" in summary and '<code>{"1": 4, "2": 4}</code>' in summary
    realized = version.text.split('id="realized"')[1].split("</table>")[0]
    assert "<td>2</td><td>4</td><td>1.5</td><td>2.0</td><td></td>" in realized  # missing figures stay empty


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
    riddles = client.get("/v/films@1/items", params={"style": "riddle"}).text  # items 0, 3, 6
    assert (
        "3 matching items" in riddles and 'href="?q=&amp;hops=&amp;difficulty=&amp;family=&amp;style=riddle"' in riddles
    )
    released = client.get("/v/films@1/items", params={"family": "released in"}).text  # two hops: 1, 3, 5, 7
    assert "4 matching items" in released and "&amp;style=&amp;family=released%20in&amp;page=2" in released
    plain = client.get("/v/films@1/items", params={"family": "released in", "style": "plain"})
    assert "3 matching items" in plain.text  # not item 3


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
    assert '<span class="step exploration">exploration</span>' in page.text  # the call's step label
    assert "answer first seen at call 1" in page.text


def test_unknown_versions_items_and_trajectories_are_404_and_nothing_writes(client):
    assert client.get("/v/nope@3").status_code == 404
    assert client.get("/v/films@1/items/nope").status_code == 404
    assert client.get("/v/films@1/trajectories/nope").status_code == 404
    assert client.post("/v/films@1/items").status_code == 405
    assert client.get("/static/../../etc/passwd").status_code == 404


SAME_SITE = {"Origin": "http://testserver", "Sec-Fetch-Site": "same-origin"}
"""What a browser sends with the console's own form (TestClient's server is http://testserver)."""


def test_the_sql_console_reads_and_refuses_to_write(client):
    query = "select hops, count(*) as n from items group by hops order by hops"
    read = client.post("/sql", data={"q": query}, headers=SAME_SITE)
    assert read.status_code == 200 and "2 rows" in read.text and 'id="error"' not in read.text
    for write in ("create table x as select 1", "copy items to 'out.csv'", "select * from read_text('/etc/passwd')"):
        refused = client.post("/sql", data={"q": write}, headers=SAME_SITE)
        assert refused.status_code == 200 and 'id="error"' in refused.text, write
    assert client.get("/sql").status_code == 200  # the empty console
    linked = client.get("/sql", params={"q": query})  # a link fills the form and runs nothing
    assert linked.status_code == 200 and query in linked.text and 'id="result"' not in linked.text


def test_only_the_local_users_own_page_is_served(client):
    """DNS rebinding (a foreign Host), a cross-site form or fetch, and GET queries are refused."""
    for host in ("evil.example", "evil.example:8765", "127.0.0.1.evil.example"):
        for path in ("/", "/sql", "/v/films@1/items", "/static/style.css"):
            assert client.get(path, headers={"Host": host}).status_code == 400, (host, path)
    for host in ("127.0.0.1:8765", "localhost", "[::1]:8765"):
        assert client.get("/", headers={"Host": host}).status_code == 200, host
    for headers in (
        {"Origin": "http://evil.example"},
        {"Origin": "null"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site", "Origin": "http://testserver"},
    ):
        refused = client.post("/sql", data={"q": "select 1 as one"}, headers=headers)
        assert refused.status_code == 403 and "<td>1</td>" not in refused.text, headers
    assert client.post("/sql", data={"q": "select 41 + 1 as n"}).text.count("<td>42</td>") == 1  # curl: no headers


def test_every_response_carries_the_security_headers(client):
    for path in ("/", "/v/films@1", "/sql", "/static/style.css", "/v/nope@1"):
        headers = client.get(path).headers
        assert headers["content-security-policy"].startswith("default-src 'self'"), path
        assert "frame-ancestors 'none'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff" and headers["x-frame-options"] == "DENY"


def test_console_results_and_queries_are_bounded(client):
    big = client.post("/sql", data={"q": "select repeat('x', 300000000) as s"}, headers=SAME_SITE)
    assert big.status_code == 200 and len(big.content) < 100_000 and "over 8 MB" in big.text
    long_cell = client.post("/sql", data={"q": "select repeat('y', 5000) as s"}, headers=SAME_SITE)
    assert "y" * 2_000 in long_cell.text and "y" * 2_001 not in long_cell.text and "5000 characters" in long_cell.text
    too_long = client.post("/sql", data={"q": "select 1" + " " * 30_000}, headers=SAME_SITE)
    assert too_long.status_code == 400 and "characters" in too_long.text
    unions = " union ".join(["select 1"] * 1_200)
    assert "unions" in client.post("/sql", data={"q": unions}, headers=SAME_SITE).text


def test_a_malformed_query_string_is_a_400_not_a_500(client):
    for params in ({"page": "²"}, {"page": "1e9999"}, {"hops": "٣"}, {"page": "-1"}):
        assert client.get("/v/films@1/items", params=params).status_code == 400, params
    assert client.get("/v/films@1/items", params={"page": "", "hops": ""}).status_code == 200


def test_a_multihop_items_chain_is_drawn_with_the_names_of_its_graph(tmp_path):
    from synth.run.generate import generate
    from synth.store.reader import iter_records

    settings = Settings(home=tmp_path)
    version = generate(settings, "multihop", ["n=2", "seed=1", "panel.enabled=false"], llm="fake").version
    item = next(iter_records(settings, version, "items"))
    page = TestClient(make_app(settings), base_url="http://127.0.0.1").get(f"/v/{version.ref}/items/{item.id}")
    assert page.status_code == 200
    assert f'title="{item.path[0].head}"' in page.text and f">{item.answer}</span>" in page.text  # a name, not an id
    assert item.cues and "(admits " in page.text  # each cue with how many entities it admits
    assert page.text.count('class="badge"') == len(item.cues) and '<svg id="construction"' in page.text
    evidence = page.text.split("<h2>Evidence</h2>")[1].split("<h2>")[0]
    assert item.evidence_doc_ids and all(doc_id in evidence for doc_id in item.evidence_doc_ids)
    assert "not in this data root" not in evidence and evidence.count('class="title"') == len(item.evidence_doc_ids)


def test_evidence_comes_from_the_corpus_the_agents_searched_when_the_graph_cannot_give_it(tmp_path):
    """A Search-R1 corpus file (no graph behind it): its stored passages, found by the fingerprint
    the version records."""
    from synth.browse.data import StoreView
    from synth.search.world import World

    settings = Settings(home=tmp_path)
    corpus_file = tmp_path / "corpus.jsonl"
    corpus_file.write_text('{"id": "d1", "contents": "\\"Alpha\\"\\nAlpha is a test passage."}\n')
    world = World(settings, corpus_file=corpus_file, log=lambda _: None)
    version = DatasetVersion.model_construct(
        summary={"retriever": {"corpus_fingerprint": world.corpus.fingerprint}}, kg_snapshot=None, config={}
    )
    (doc_id, passage), (missing, nothing) = StoreView(settings).passages(version, [world.corpus.documents[0].id, "d9"])
    assert passage is not None and passage.text == "Alpha is a test passage." and passage.title == "Alpha"
    assert (missing, nothing) == ("d9", None)


def test_an_items_construction_is_drawn_with_its_cues_and_its_evidence_is_listed(client):
    page = client.get("/v/films@1/items/item-1").text
    assert '<svg id="construction"' in page
    for node in ('class="node anchor" data-key="Person 1"', 'class="node hidden" data-key="Film 1"'):
        assert node in page
    assert 'class="node answer" data-key="1999"' in page and 'class="node anchor" data-key="Studio 1"' in page
    assert page.count('class="badge"') == 3 and "cue 2 · 7" in page
    assert "Person 1#0: the corpus it came from is not in this data root." in page  # no graph, no corpus here


def test_a_diff_counts_and_lists_what_changed_between_two_versions(client, store):
    from synth.browse.diff import diff_versions
    from synth.store.catalog import Catalog
    from synth.store.query import run_query

    assert 'href="/diff?old=films%401&amp;new=films%402"' in client.get("/v/films@2").text  # from its parent
    page = client.get("/diff", params={"old": "films@1", "new": "films@2"}).text
    assert "1 added · 1 removed · 2 relabeled · 5 unchanged labels" in page
    assert "Which film number 8 was made?" in page.split('id="added"')[1].split("</table>")[0]
    assert "Which film number 0 was made?" in page.split('id="removed"')[1].split("</table>")[0]
    assert "<td>unsolved</td><td>hard</td>" in page and "<td>medium</td><td>easy</td>" in page
    assert "<select" not in page and "<select" in client.get("/diff").text  # no versions given: a form
    assert client.get("/diff", params={"old": "films@1", "new": "films@9"}).status_code == 404
    with Catalog.open(store, read_only=True) as catalog:
        old, new = catalog.resolve("films@1"), catalog.resolve("films@2")
    shortened = diff_versions(store, old, new, shown=0)
    assert shortened.added == [] and shortened.counts["relabeled"] == 2
    for kind, expected in (("added", {"item-8"}), ("removed", {"item-0"}), ("relabeled", {"item-2", "item-3"})):
        rows = run_query(store, shortened.sql(kind)).rows
        assert {row[0] for row in rows} == expected, kind  # the console link lists them all
    link = page.split('href="/sql?q=')[1].split('"')[0] if 'href="/sql?q=' in page else None
    assert link is None or client.get(f"/sql?q={link}").status_code == 200


def test_eval_runs_are_listed_and_compared_item_by_item_with_their_transcripts(client):
    listing = client.get("/evals").text
    assert "eval-model-a" in listing and "model-b" in listing and 'type="checkbox"' in listing
    page = client.get("/evals/compare", params={"id": ["eval-model-a", "eval-model-b"]}).text
    assert "0.500" in page and "0.750" in page  # pass@1 of each, side by side
    assert "4 items · 1 the runs disagree on" in page
    side = page.split('id="side"')[1]
    assert side.index("Which film number 2") < side.index("Which film number 0")  # disagreements first
    attempt = client.get("/evals/eval-model-b/attempts/item-2/0")
    assert attempt.status_code == 200 and "model-b says so" in attempt.text and "reward" in attempt.text
    assert client.get("/evals/compare", follow_redirects=False).status_code == 303
    assert client.get("/evals/compare", params={"id": "nope"}).status_code == 404
    assert client.get("/evals/eval-model-a/attempts/item-2/5").status_code == 404


def test_a_damaged_version_is_said_on_its_pages_and_the_rest_still_browses(client, store):
    parts = sorted((store.datasets_dir / "films").glob("v2/**/*.parquet"))
    assert parts, "films@2 has parts"
    parts[0].write_bytes(b"not parquet")
    damaged = client.get("/v/films@2/items")
    assert damaged.status_code == 500 and "films@2 is damaged" in damaged.text
    assert "synth datasets verify" in damaged.text
    assert client.get("/v/films@1/items").status_code == 200 and client.get("/").status_code == 200

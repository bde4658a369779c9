"""`synth browse` pages on a store made here: every page renders from the store, filters and pages
work (pushed down to DuckDB), untrusted text is escaped, and nothing but reading is served."""

import pytest
from starlette.testclient import TestClient

from synth.browse.app import make_app
from synth.schemas import FunnelStage, Item, Provenance
from synth.settings import Settings
from synth.store.publish import VersionSpec, publish_version

SCRIPT = "Which <script>alert('x')</script> film is it?"


def _item(index: int, hops: int, question: str | None = None) -> Item:
    return Item(
        id=f"item-{index}",
        question=question or f"Which film number {index} was made?",
        answer=f"Film {index}",
        recipe="multihop",
        hops=hops,
        difficulty="medium" if index % 2 else "unsolved",
        provenance=Provenance(generator="test"),
    )


@pytest.fixture
def client(tmp_path):
    settings = Settings(home=tmp_path)
    items = [_item(index, 2 + index % 3) for index in range(7)] + [_item(7, 3, SCRIPT)]
    spec = VersionSpec(
        name="films",
        recipe="multihop",
        config={"n": 8},
        models={},
        kg_snapshot=None,
        seed=0,
        parent=None,
        funnel=[FunnelStage(stage="walk", input=20, kept=8, dropped={"ambiguous": 12})],
        summary={},
    )
    publish_version(settings, spec, {"items": items})
    return TestClient(make_app(settings, page_size=3))


def test_the_datasets_page_lists_versions_and_a_version_page_its_lineage_and_funnel(client):
    index = client.get("/")
    assert index.status_code == 200 and "films@1" in index.text
    version = client.get("/v/films@1")
    assert version.status_code == 200
    assert "ambiguous: 12" in version.text and "multihop" in version.text


def test_items_are_filtered_and_paged_by_the_store(client):
    everything = client.get("/v/films@1/items")
    assert "8 matching items" in everything.text
    three_hops = client.get("/v/films@1/items", params={"hops": 3})
    assert "3 matching items" in three_hops.text  # items 1, 4 and 7
    text = client.get("/v/films@1/items", params={"q": "number 5"})
    assert "1 matching items" in text.text and "Film 5" in text.text
    assert "page 1 of 3" in everything.text and 'rel="next"' in everything.text
    last = client.get("/v/films@1/items", params={"page": 3})
    assert last.text.count("/items/item-") == 2 and 'rel="next"' not in last.text
    assert "item-6" in last.text and 'rel="prev"' in last.text
    beyond = client.get("/v/films@1/items", params={"page": 99})
    assert "page 3 of 3" in beyond.text


def test_an_item_page_shows_its_facts_and_untrusted_text_is_escaped(client):
    item = client.get("/v/films@1/items/item-7")
    assert item.status_code == 200
    assert "<script>alert" not in item.text and "&lt;script&gt;alert" in item.text
    listing = client.get("/v/films@1/items")
    assert "<script>alert" not in listing.text


def test_unknown_versions_and_items_are_404_and_nothing_writes(client):
    assert client.get("/v/nope@3").status_code == 404
    assert client.get("/v/films@1/items/nope").status_code == 404
    assert client.post("/v/films@1/items").status_code == 405
    assert client.get("/static/../../etc/passwd").status_code == 404

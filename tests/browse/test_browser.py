"""The browse pages in a real headless browser (Debian's Chromium, driven by Playwright): they
render, filters and pagination work by clicking, a trajectory shows its calls and reasoning, and a
question holding a <script> shows as text and runs nothing.

Needs `chromium` on the PATH (`apt-get install chromium`; `.ci/run` installs it and sets
SYNTH_BROWSER_TESTS=required, so CI fails rather than skips without it)."""

import os
import shutil

import pytest
from browse_store import SCRIPT_QUESTION

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("SYNTH_BROWSER_TESTS") != "required":
    pytest.skip("no chromium on the PATH (apt-get install chromium)", allow_module_level=True)

FLAGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
"""Root in a container needs --no-sandbox; the rest keep the browser off the network."""


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module (a launch costs about a second); each test gets its own context."""
    from playwright.sync_api import sync_playwright

    assert CHROMIUM is not None, "chromium is required here (SYNTH_BROWSER_TESTS=required)"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield launched
        launched.close()


@pytest.fixture
def browser_page(browser, served):
    context = browser.new_context()  # no cookie, storage or cache carried from another test
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.dialogs = dialogs  # type: ignore[attr-defined]
    blocked: list[str] = []  # what the page's Content-Security-Policy stopped: the pages must need none of it
    page.on("console", lambda message: "Content Security Policy" in message.text and blocked.append(message.text))
    yield page, served
    context.close()
    assert blocked == []


def test_every_page_renders_and_the_links_lead_through_the_store(browser_page):
    page, url = browser_page
    page.goto(url)
    assert page.locator("h1").inner_text() == "Datasets"
    page.get_by_role("link", name="films@1").click()
    assert page.locator("h1").inner_text() == "films@1"
    assert "ambiguous: 12" in page.locator("body").inner_text()
    page.get_by_role("link", name="Items (8)").click()
    assert page.locator("#count").inner_text().startswith("8 matching items")
    page.get_by_role("link", name="Which film number 1 was made?").click()
    assert page.locator("h1").inner_text() == "Which film number 1 was made?"
    assert "Person 1 — directed → Film 1" in page.locator(".chain").inner_text()


def test_filters_and_pagination_work_by_clicking(browser_page):
    page, url = browser_page
    page.goto(f"{url}/v/films@1/items")
    assert page.locator("#items tr").count() == 4  # a header and a page of 3
    page.get_by_role("link", name="next").click()
    assert "page 2 of 3" in page.locator("#count").inner_text()
    page.get_by_role("link", name="next").click()
    assert page.locator("#items tr").count() == 3 and page.get_by_role("link", name="next").count() == 0
    page.select_option("select[name=difficulty]", "medium")
    page.get_by_role("button", name="Filter").click()
    assert page.locator("#count").inner_text().startswith("4 matching items")
    page.locator("#items").get_by_role("link", name="released in").first.click()  # a family cell narrows to it
    assert page.locator("#count").inner_text().startswith("4 matching items")  # medium = the two-hop items
    assert page.input_value("input[name=family]") == "released in"
    page.fill("input[name=family]", "")
    page.fill("input[name=q]", "number 5")
    page.get_by_role("button", name="Filter").click()
    assert page.locator("#count").inner_text().startswith("1 matching items")
    assert page.locator("#items").inner_text().count("Film 5") == 1


def test_a_trajectory_shows_its_calls_observations_and_reasoning(browser_page):
    page, url = browser_page
    page.goto(f"{url}/v/films@1/items/item-1")
    page.get_by_role("link", name="solver").click()
    call = page.locator(".call")
    assert "search" in call.inner_text() and '"query": "film number 1"' in call.inner_text()
    assert "Film 1 was made in 1999." in page.locator(".turn.tool").inner_text()
    reasoning = page.locator("details.reasoning")
    assert not reasoning.locator("pre").is_visible()  # collapsed until asked for
    reasoning.locator("summary").click()
    assert reasoning.locator("pre").inner_text() == "I should search for the director first."


def test_a_question_holding_a_script_shows_as_text_and_runs_nothing(browser_page):
    page, url = browser_page
    page.goto(f"{url}/v/films@1/items/item-7")
    assert page.locator("h1").inner_text() == SCRIPT_QUESTION
    page.goto(f"{url}/v/films@1/items?page=3")
    assert SCRIPT_QUESTION in page.locator("#items").inner_text()
    assert page.dialogs == []  # type: ignore[attr-defined]


def test_the_sql_console_refuses_a_write(browser_page):
    page, url = browser_page
    page.goto(url)
    page.get_by_role("link", name="SQL").click()
    page.fill("textarea[name=q]", "select count(*) as n from items where version = 1")
    page.get_by_role("button", name="Run").click()
    assert page.locator("#result").inner_text().split() == ["n", "8"]
    page.fill("textarea[name=q]", "delete from items")
    page.get_by_role("button", name="Run").click()
    assert "refused" in page.locator("#error").inner_text() or "read-only" in page.locator("#error").inner_text()
    page.goto(f"{url}/sql?q=select+count(*)+as+n+from+items+where+version+%3D+1")  # a link fills the form
    assert page.locator("#result").count() == 0
    page.get_by_role("button", name="Run").click()
    assert page.locator("#result").inner_text().split() == ["n", "8"]  # nothing was deleted


def test_the_item_graph_shows_the_chain_and_the_cues(browser_page):
    page, url = browser_page
    page.goto(f"{url}/v/films@1/items/item-1")
    graph = page.locator("svg#construction")
    assert graph.is_visible() and graph.bounding_box()["width"] > 600  # type: ignore[index]
    names = graph.locator(".node text").all_text_contents()
    assert {"Person 1", "Film 1", "Studio 1", "Festival 9"} <= set(names)
    assert graph.locator(".node.hidden").count() == 1 and graph.locator(".node.answer").count() == 1
    assert [text.split(" · ")[1] for text in graph.locator(".badge text").all_text_contents()] == ["4", "7", "2"]
    assert graph.locator(".edge line").count() == 4  # the chain's two edges, the fact's, the second lane's
    assert page.locator("ol.cues li").count() == 3


def test_a_diff_and_eval_runs_side_by_side_are_reached_by_clicking(browser_page):
    page, url = browser_page
    page.goto(url)
    page.get_by_role("link", name="Diff").click()
    page.select_option("select[name=old]", "films@1")
    page.select_option("select[name=new]", "films@2")
    page.get_by_role("button", name="Compare").click()
    assert page.locator("#diff-counts").inner_text().startswith("1 added · 1 removed · 2 relabeled")
    page.get_by_role("link", name="Evals").click()
    for eval_id in ("eval-model-a", "eval-model-b"):
        page.get_by_label(f"compare {eval_id}").check()
    page.get_by_role("button", name="Compare the ticked runs").click()
    assert "1 the runs disagree on" in page.locator("#side-counts").inner_text()
    page.locator("#side").get_by_role("link", name="Film 2", exact=True).click()
    assert "model-b says so" in page.locator(".chat").inner_text()

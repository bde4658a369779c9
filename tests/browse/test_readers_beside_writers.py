"""Readers never rewrite the store (issue 48 item 1): while console queries run, every page loads,
`synth datasets list` and a publish in other processes succeed, and the catalog file is the same
file afterwards, with nothing moved aside as damaged."""

import os
import subprocess
import sys
import threading
import time

import httpx

import synth.browse.app
import synth.store.query
from synth.browse.background import serving

PAGES = [
    "/",
    "/v/films@1",
    "/v/films@1/items",
    "/v/films@1/items?difficulty=medium&page=2",
    "/v/films@1/items/item-1",
    "/v/films@1/trajectories/t-item-1",
    "/v/films@2",
    "/diff?old=films@1&new=films@2",
    "/evals",
    "/evals/compare?id=eval-model-a&id=eval-model-b",
    "/evals/eval-model-b/attempts/item-2/0",
    "/sql",
    "/static/style.css",
]
TIMER = threading.Timer
SLOW = "select count(*) as n from range(1000000000000::bigint) a"
"""Runs until the console's time limit stops it."""


def synth_process(*args: str, home) -> subprocess.CompletedProcess:
    environment = {**os.environ, "SYNTH_HOME": str(home)}
    command = [sys.executable, "-c", "from synth.cli.main import main; main()", *args]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=300)


class Timers:
    """The console queries' time limits, kept so the test can stop the queries once it is done."""

    def __init__(self):
        self.made: list[threading.Timer] = []

    def __call__(self, interval, function):
        timer = TIMER(interval, function)
        self.made.append(timer)
        return timer

    def stop_queries(self) -> None:
        for timer in self.made:
            timer.cancel()
            timer.function()  # the query's connection.interrupt


def test_console_queries_block_no_page_no_listing_and_no_publish_and_move_nothing(store, monkeypatch):
    timers = Timers()
    monkeypatch.setattr(synth.browse.app, "SQL_TIMEOUT_S", 300.0)
    monkeypatch.setattr(synth.store.query.threading, "Timer", timers)
    catalog = store.catalog_path
    before = os.stat(catalog)
    consoles: list[httpx.Response] = []

    with serving(store) as url:
        headers = {"Origin": url, "Sec-Fetch-Site": "same-origin"}

        def console() -> None:
            consoles.append(httpx.post(f"{url}/sql", data={"q": SLOW}, headers=headers, timeout=60))

        running = [threading.Thread(target=console) for _ in range(2)]  # two at once, as two tabs
        for thread in running:
            thread.start()
        deadline = time.monotonic() + 30
        while len(timers.made) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(timers.made) == 2  # both queries are running now
        for path in PAGES:
            response = httpx.get(url + path, timeout=30)
            assert response.status_code == 200, (path, response.text[:300])
        listed = synth_process("datasets", "list", "--json", home=store.home)
        published = synth_process(
            "generate", "--recipe", "multihop", "--n", "2", "--llm", "fake", "--name", "beside", "--quiet",
            home=store.home,
        )  # fmt: skip
        assert all(thread.is_alive() for thread in running), "the readers and the publish ran beside the consoles"
        timers.stop_queries()
        for thread in running:
            thread.join()
        after_pages = [httpx.get(url + path, timeout=30).status_code for path in PAGES]

    assert listed.returncode == 0, listed.stderr
    assert published.returncode == 0, published.stderr
    assert [consoles[0].status_code, consoles[1].status_code] == [200, 200]
    assert all("was stopped" in response.text for response in consoles)
    assert after_pages == [200] * len(PAGES)
    after = os.stat(catalog)
    assert (after.st_ino, after.st_dev) == (before.st_ino, before.st_dev)  # the same file, never moved aside
    assert not list(catalog.parent.glob("*damaged*"))
    names = synth_process("datasets", "list", "--json", home=store.home)
    assert "beside" in names.stdout and "films" in names.stdout

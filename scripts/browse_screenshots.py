"""Screenshots of the `synth browse` pages for the docs, taken by the same headless Chromium the
tests drive, over small dry-run data made in a temporary data root with the CLI a user runs: a
multihop version, a curated child of it (for the diff) and a dry-run eval of each (side by side).

    python scripts/browse_screenshots.py   # writes docs/images/browse-*.png
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from synth.browse.background import serving
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.evals import list_runs
from synth.store.reader import iter_records

OUT = Path(__file__).resolve().parent.parent / "docs" / "images"
FLAGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"]


def main() -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("needs chromium on the PATH (apt-get install chromium)")
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings(home=Path(folder))
        version = generate(
            settings, "multihop", ["n=12", "seed=4", "distill.enabled=true", "distill.n=1"], llm="fake"
        ).version
        held_out = Path(folder) / "held_out.jsonl"  # three of the questions, for curate to drop as contaminated
        items = list(iter_records(settings, version, "items"))
        held_out.write_text(
            "".join(json.dumps({"question": it.question, "answer": it.answer}) + "\n" for it in items[-3:])
        )
        synth = [sys.executable, "-m", "synth.cli.main"]
        environment = {**os.environ, "SYNTH_HOME": folder}
        for command in (
            ["curate", version.ref, "--panel", "--llm", "fake", "--name", version.name, "--benchmark", str(held_out)],
            ["eval", "fake", version.ref, "--split", "all"],
            ["eval", "fake", f"{version.name}@2", "--split", "all"],
        ):
            subprocess.run([*synth, *command], env=environment, check=True, capture_output=True)
        eval_ids = [run.id for run in list_runs(settings)]
        item = items[0]
        trajectory = next(t for t in iter_records(settings, version, "trajectories") if t.item_id == item.id)
        ref = version.ref.replace("@", "%40")
        pages = {
            "datasets": "/",
            "version": f"/v/{ref}",
            "items": f"/v/{ref}/items?hops=3",
            "item": f"/v/{ref}/items/{item.id}",
            "trajectory": f"/v/{ref}/trajectories/{trajectory.id}",
            "diff": f"/diff?old={ref}&new={version.name}%402",
            "evals": "/evals/compare?" + "&".join(f"id={eval_id}" for eval_id in eval_ids),
            "sql": "/sql?q=select+hops,+difficulty,+count(*)+as+items+from+items+group+by+all+order+by+1",
        }
        OUT.mkdir(parents=True, exist_ok=True)
        with serving(settings) as url, sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=FLAGS)
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            for name, path in pages.items():
                page.goto(url + path)
                page.screenshot(path=str(OUT / f"browse-{name}.png"))
                print(f"wrote {OUT / f'browse-{name}.png'}")
            browser.close()


if __name__ == "__main__":
    main()

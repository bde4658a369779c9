"""Question quality per style, so a change to phrasing is measured: leaks, grammar lint, length,
openings, type-noun coverage, and what uniqueness and the one-search shortcut filter dropped, for N items of each
style from the bundled graph (no model needed).

    python benchmarks/bench_phrasing.py [--items 1000] [--seed 0] [--styles plain obfuscated]

Runs the multihop recipe's construction (walks, reverse construction, template phrasing, cheap
filters; no panel) and prints the quality report stored with each version, plus items/s.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402

from synth.generate import generate  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.reader import iter_records  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--styles", nargs="+", default=["plain", "obfuscated"])
    parser.add_argument("--examples", type=int, default=5, help="Questions printed per style.")
    arguments = parser.parse_args()
    for style in arguments.styles:
        with tempfile.TemporaryDirectory() as home:
            settings = Settings(home=Path(home))
            started = time.perf_counter()
            result = generate(
                settings,
                "multihop",
                [f"n={arguments.items}", f"seed={arguments.seed}", f"style={style}", "panel.enabled=false"],
            )
            seconds = time.perf_counter() - started
            quality = result.version.summary["quality"]
            items = list(iter_records(settings, result.version, "items"))
        funnel = {stage.stage: stage for stage in result.version.funnel}
        print(
            f"== style {style}: {len(items)} items in {seconds:.1f} s ({len(items) / seconds:.1f} items/s), peak "
            f"RSS {peak_rss_mib():.0f} MiB"
        )
        print(json.dumps(quality, indent=1))
        for stage in ("uniqueness", "leakage", "shortcut"):  # the shortcut filter: one search with the question
            if stage in funnel:
                print(
                    f"  {stage}: kept {funnel[stage].kept} of {funnel[stage].input}, dropped "
                    f"{dict(funnel[stage].dropped)}"
                )
        for item in items[: arguments.examples]:
            print(f"  [{item.hops} hops] {item.question} -> {item.answer}")


if __name__ == "__main__":
    main()

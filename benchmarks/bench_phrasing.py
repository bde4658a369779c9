"""Question quality per style, so a change to phrasing or construction is measured: answers in a larger
world, hub cues, cues that decide alone, clause length, words, grammar lint, openings, type-noun coverage,
what the construction and the one-search shortcut filter dropped, the yield (candidates per published
item) and construction time per item, for N items of each style from the bundled graph (no model).

    python benchmarks/bench_phrasing.py [--items 1000] [--seed 0] [--styles plain obfuscated long]

`long` is the plain style on 5-6 hop chains (told as sentences), `longest` on 7-8. Per style it
also prints the effective hops (the fewest a solver needs, synth.kg.shortcuts) against the chain's,
the share of items an appended cue decides, the share saying "something", and the construction
time per published item. Runs the multihop recipe's
construction (walks, reverse construction, template phrasing, cheap filters; no panel) and prints
the quality report stored with each version, then one summary table.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402

from synth.run.generate import generate  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.reader import iter_records  # noqa: E402

STYLES = {
    "plain": ["style=plain", "hops=[2,3,4]"],
    "obfuscated": ["style=obfuscated", "hops=[2,3,4]"],
    "long": ["style=plain", "hops=[5,6]"],
    "longest": ["style=plain", "hops=[7,8]"],
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--styles", nargs="+", default=["plain", "obfuscated", "long"], choices=list(STYLES))
    parser.add_argument("--examples", type=int, default=5, help="Questions printed per style.")
    arguments = parser.parse_args()
    rows = []
    for style in arguments.styles:
        with tempfile.TemporaryDirectory() as home:
            settings = Settings(home=Path(home))
            started = time.perf_counter()
            result = generate(
                settings,
                "multihop",
                [f"n={arguments.items}", f"seed={arguments.seed}", *STYLES[style], "panel.enabled=false"],
            )
            seconds = time.perf_counter() - started
            quality = result.version.summary["quality"]
            items = list(iter_records(settings, result.version, "items"))
        funnel = {stage.stage: stage for stage in result.version.funnel}
        candidates = result.version.summary["attempts"]
        print(
            f"== style {style}: {len(items)} items in {seconds:.1f} s ({len(items) / seconds:.1f} items/s), "
            f"{candidates} candidates ({candidates / max(1, len(items)):.1f} per item), peak RSS "
            f"{peak_rss_mib():.0f} MiB"
        )
        print(json.dumps(quality, indent=1))
        for stage in ("walk", "uniqueness", "types", "leakage", "shortcut"):  # shortcut: one search with the question
            if stage in funnel:
                print(
                    f"  {stage}: kept {funnel[stage].kept} of {funnel[stage].input}, dropped "
                    f"{dict(funnel[stage].dropped)}"
                )
        for item in items[: arguments.examples]:
            print(f"  [{item.hops} hops] {item.question} -> {item.answer}")
        rows.append((style, len(items), seconds, candidates, quality))
    print(
        f"\n{'style':<11}{'items':>6}{'s/item':>8}{'cand/item':>10}{'world>1':>8}{'hub':>5}{'single':>7}"
        f"{'clause':>10}{'words':>7}{'lint':>7}{'someth.':>8}{'cue-dec':>8}  effective hops by chain hops"
    )
    for style, count, seconds, candidates, quality in rows:
        clause = quality.get("longest_clause_words", {})
        print(
            f"{style:<11}{count:>6}{seconds / max(1, count):>8.3f}{candidates / max(1, count):>10.1f}"
            f"{quality.get('world_answers_over_1_share', float('nan')):>8.3f}{quality.get('hub_cue_items', '-'):>5}"
            f"{quality.get('single_cue_items', '-'):>7}{clause.get('mean', 0):>5.1f}/{clause.get('max', 0):<4}"
            f"{quality.get('mean_words', 0):>7.1f}{quality.get('lint_share', 0):>7.3f}"
            f"{quality.get('something_share', 0):>8.3f}"
            f"{quality.get('deciding_appended_cue_items', 0) / max(1, count):>8.3f}  {quality.get('effective_hops')}"
        )


if __name__ == "__main__":
    main()

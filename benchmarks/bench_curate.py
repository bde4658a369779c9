"""Curating data a user already has: items/s of each check, and of `synth curate` end to end.

    python benchmarks/bench_curate.py [--items 2000]

The source is an `sft` JSONL of one search-and-answer rollout per question (the layout TRL, Search-R1
and R1-Searcher users keep their runs in, with `golden_answers`): `--items` template questions of the
bundled graph (several seeds, plain and obfuscated styles), plus planted trouble, 2% each: exact
copies of another row, copies with one word changed (near-duplicates), and the 30 benchmark questions
of tests/fixtures/contamination/planted.jsonl reworded by hand (contamination). The whole curation
runs first as `synth curate` does, from a cold process (format, leakage, dedup, near_dup,
contamination against the planted questions, outcome, then publish); then every check alone on every
item, with the embedding model already loaded (items/s, what it dropped, how many planted pairs it
caught). The last line reads `curate rows_per_s=<x> peak_mib=<y>` for the end-to-end run.
"""

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from _measure import peak_rss_mib  # noqa: E402
from bench_contamination import planted_rows, template_questions  # noqa: E402

from synth.filters.contamination import ContaminationConfig, ContaminationFilter  # noqa: E402
from synth.filters.dedup import ExactDedupFilter  # noqa: E402
from synth.filters.format import FormatFilter  # noqa: E402
from synth.filters.leakage import LeakageFilter  # noqa: E402
from synth.filters.near_dup import NearDupFilter  # noqa: E402
from synth.filters.shortcut import ShortcutConfig, ShortcutFilter  # noqa: E402
from synth.pipelines.curate import CurateFormat, CurateNearDup  # noqa: E402
from synth.progress import Progress  # noqa: E402
from synth.run.generate import generate  # noqa: E402
from synth.search.world import World  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.imports import read_source  # noqa: E402


def rollout(question: str, answer: str) -> list[dict]:
    call = {
        "id": "c0",
        "type": "function",
        "function": {"name": "search", "arguments": json.dumps({"query": question})},
    }
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c0", "content": f'Doc 1(Title: "{answer}") {answer} is the answer.'},
        {"role": "assistant", "content": f"<answer>{answer}</answer>"},
    ]


def one_word_changed(question: str, rng: random.Random) -> str:
    words = question.split()
    position = rng.randrange(len(words) - 1)  # not the last word, which carries the question mark
    words[position] = {"the": "a", "a": "the", "Which": "What", "What": "Which"}.get(words[position], "that")
    return " ".join(words)


def source_rows(
    pairs: list[tuple[str, str]], benchmark: list[dict], seed: int
) -> tuple[list[dict], dict[str, list[set[str]]]]:
    """The rows of the source file, and the questions planted for each check to catch: copies that
    differ only in case and punctuation (an identical question would be merged into one item with
    two rollouts on import), copies with one word changed, and reworded benchmark questions."""
    rng = random.Random(seed)
    count = max(1, len(pairs) // 50)
    copied, changed = rng.sample(pairs, count), rng.sample(pairs, count)
    copies = [(question.lower().rstrip("?") + " ?", answer) for question, answer in copied]
    near = [(one_word_changed(question, rng), answer) for question, answer in changed]
    contaminated = [(row["reworded"], row["answer"]) for row in benchmark]
    mixed = pairs + copies + near + contaminated
    rng.shuffle(mixed)
    rows = [{"messages": rollout(question, answer), "golden_answers": [answer]} for question, answer in mixed]
    planted = {  # a pair is caught when either of its two questions is dropped
        "dedup": [{original, copy} for (original, _), (copy, _) in zip(copied, copies)],
        "near_dup": [{original, copy} for (original, _), (copy, _) in zip(changed, near)],
        "contamination": [{question} for question, _ in contaminated],
    }
    return rows, planted


def benchmark_file(folder: Path, benchmark: list[dict]) -> Path:
    """The planted questions as a question-only benchmark (Search-R1 layout)."""
    path = folder / "benchmark.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"b{i}", "question": row["question"]}) + "\n" for i, row in enumerate(benchmark))
    )
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=2000, help="template questions in the source")
    parser.add_argument("--seed", type=int, default=0)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder_name:
        folder = Path(folder_name)
        started = time.perf_counter()
        seeds = list(range(100, 104))
        pairs = list(dict.fromkeys(template_questions(folder, seeds, arguments.items // len(seeds) + 1)))
        pairs = pairs[: arguments.items]
        written = planted_rows()
        rows, planted = source_rows(pairs, written, arguments.seed)
        source = folder / "runs.jsonl"
        source.write_text("".join(json.dumps(row) + "\n" for row in rows))
        print(
            f"source: {len(rows)} rows ({len(pairs)} template questions, planted "
            f"{ {check: len(found) for check, found in planted.items()} }), made in "
            f"{time.perf_counter() - started:.0f} s"
        )
        benchmark = benchmark_file(folder, written)

        settings = Settings(home=folder / "home")
        started = time.perf_counter()
        result = generate(
            settings,
            "curate",
            [],
            "bench-curated",
            Progress(enabled=False),
            config={"source": str(source), "contamination": {"benchmarks": [str(benchmark)]}},
        )
        wall = time.perf_counter() - started
        funnel = ", ".join(f"{stage.stage} -{stage.input - stage.kept}" for stage in result.version.funnel)
        print(
            f"synth curate: {len(rows)} rows -> {result.version.row_counts.get('items', 0)} items in {wall:.1f} s "
            f"({len(rows) / wall:.0f} rows/s); funnel: {funnel}"
        )
        items = read_source(source, "sft")[0].items
        world = World(settings, log=lambda line: None)
        contamination = ContaminationConfig(benchmarks=[benchmark])
        checks = {
            "format": lambda: FormatFilter(CurateFormat()),
            "leakage": lambda: LeakageFilter(lambda entity_id: entity_id),
            "dedup": ExactDedupFilter,
            "near_dup": lambda: NearDupFilter(CurateNearDup(), []),
            "contamination": lambda: ContaminationFilter(contamination, cache_dir=folder / "cache"),
            "shortcut": lambda: ShortcutFilter(world.corpus, world.retriever("bm25"), ShortcutConfig().k),
        }
        print("each check alone on every item:")
        print(f"{'check':>13} {'items':>6} {'seconds':>8} {'items/s':>8} {'dropped':>7}  planted caught")
        for name, make in checks.items():
            check = make()
            started = time.perf_counter()
            verdicts = check.apply(items)
            seconds = time.perf_counter() - started
            dropped = {item.question for item, verdict in zip(items, verdicts) if not verdict.kept}
            groups = planted.get(name)
            caught = f"{sum(1 for group in groups if group & dropped)}/{len(groups)}" if groups else "-"
            print(
                f"{name:>13} {len(items):>6} {seconds:>8.2f} {len(items) / seconds:>8.0f} {len(dropped):>7}  {caught}"
            )

        print(f"curate rows_per_s={len(rows) / wall:.0f} peak_mib={peak_rss_mib():.0f}")


if __name__ == "__main__":
    main()

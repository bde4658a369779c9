"""Contamination recall and false positives: planted benchmark questions, verbatim and reworded.

    python benchmarks/bench_contamination.py [--distractors 900] [--clean 500]

The benchmark: 30 questions written for this test (tests/fixtures/contamination/planted.jsonl, each
with a rewording by hand) among `--distractors` template questions of the bundled graph, written in
four layouts the ecosystem ships: HotpotQA JSON (`_id`, `question`, `answer`), Search-R1 / R1-Searcher
JSONL (`id`, `question`, `golden_answers`), MuSiQue JSONL (`answer`, `answer_aliases`) and CSV; once
with the answers and once with questions only. The items: the 30 verbatim, the 30 reworded, and
`--clean` template questions made with other seeds (not in the benchmark). Template questions are a
hard negative: they share their wording with the distractors and differ only in a few names, so a
false positive here is a question that reads almost the same as a benchmark one with another answer.

Prints, per layout and with/without answers: recall on verbatim and reworded plants, false
positives on the clean items (those whose closest benchmark question has another answer), and
items/s (the first layout embeds the benchmark; the others read the embedding cache). The last
line reads `contamination recall_reworded=<x> false_positive=<y>` for the question-only files.
"""

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from synth.contract.matching import normalize_answer  # noqa: E402
from synth.filters.contamination import ContaminationConfig, ContaminationFilter  # noqa: E402
from synth.run.generate import generate  # noqa: E402
from synth.schemas import Item, Provenance  # noqa: E402
from synth.settings import Settings  # noqa: E402
from synth.store.reader import iter_records  # noqa: E402

PLANTED = ROOT / "tests" / "fixtures" / "contamination" / "planted.jsonl"


def planted_rows() -> list[dict]:
    """The questions written for this benchmark: id, question, reworded, answer, aliases."""
    return [json.loads(line) for line in PLANTED.read_text().splitlines() if line.strip()]


def template_questions(home: Path, seeds: list[int], n: int) -> list[tuple[str, str]]:
    found = []
    for seed in seeds:
        style = "obfuscated" if seed % 2 else "plain"
        settings = Settings(home=home / f"seed-{seed}")
        params = [f"n={n}", f"seed={seed}", "hops=[2,3]", f"style={style}"]
        params += ["panel.enabled=false", "checks.shortcut.enabled=false", "checks.near_dup.enabled=false"]
        version = generate(settings, "multihop", params).version
        found += [(item.question, item.answer) for item in iter_records(settings, version, "items")]
    return found


def write(folder: Path, layout: str, rows: list[dict], answers: bool) -> Path:
    """The benchmark rows in one layout; without `answers`, questions and ids only."""
    if layout == "hotpotqa.json":
        data = [
            {"_id": r["id"], "question": r["question"], **({"answer": r["answer"]} if answers else {})} for r in rows
        ]
        path = folder / "hotpot_dev_distractor.json"
        path.write_text(json.dumps(data))
    elif layout == "searchr1.jsonl":
        path = folder / "test.jsonl"
        path.write_text(
            "".join(
                json.dumps(
                    {
                        "id": r["id"],
                        "question": r["question"],
                        **({"golden_answers": [r["answer"], *r["aliases"]]} if answers else {}),
                    }
                )
                + "\n"
                for r in rows
            )
        )
    elif layout == "musique.jsonl":
        path = folder / "musique_ans_dev.jsonl"
        path.write_text(
            "".join(
                json.dumps(
                    {"id": r["id"], "question": r["question"], "answerable": True}
                    | ({"answer": r["answer"], "answer_aliases": r["aliases"]} if answers else {})
                )
                + "\n"
                for r in rows
            )
        )
    else:
        path = folder / "questions.csv"
        with path.open("w", newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(["id", "question", *(["answer"] if answers else [])])
            for r in rows:
                writer.writerow([r["id"], r["question"], *([r["answer"]] if answers else [])])
    return path


def item(index: int, question: str, answer: str, aliases: list[str] = ()) -> Item:
    return Item(
        id=f"item-{index}",
        question=question,
        answer=answer,
        aliases=list(aliases),
        recipe="bench",
        hops=1,
        provenance=Provenance(generator="bench"),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--distractors", type=int, default=900)
    parser.add_argument("--clean", type=int, default=500)
    arguments = parser.parse_args()
    planted = planted_rows()
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary)
        per_seed = max(1, arguments.distractors // 2)
        distractors = template_questions(folder, [1, 3], per_seed)[: arguments.distractors]
        known = {question for question, _ in distractors}
        clean = [
            pair for pair in template_questions(folder, [2, 4], max(1, arguments.clean // 2)) if pair[0] not in known
        ]
        rows = [
            {"id": f"d{index}", "question": question, "answer": answer, "aliases": []}
            for index, (question, answer) in enumerate(distractors)
        ] + [
            {"id": p["id"], "question": p["question"], "answer": p["answer"], "aliases": p["aliases"]} for p in planted
        ]
        answer_of = {row["question"]: normalize_answer(row["answer"]) for row in rows}
        items = [item(i, p["question"], p["answer"], p["aliases"]) for i, p in enumerate(planted)]
        items += [item(100 + i, p["reworded"], p["answer"], p["aliases"]) for i, p in enumerate(planted)]
        items += [item(1000 + i, question, answer) for i, (question, answer) in enumerate(clean)]
        print(
            f"benchmark: {len(rows)} questions ({len(planted)} planted); items: {len(planted)} verbatim, "
            f"{len(planted)} reworded, {len(clean)} clean template questions"
        )
        last = None
        for answers in (False, True):
            for layout in ("hotpotqa.json", "searchr1.jsonl", "musique.jsonl", "questions.csv"):
                path = write(folder, layout, rows, answers)
                started = time.perf_counter()
                chain = ContaminationFilter(ContaminationConfig(benchmarks=[path]), cache_dir=folder / "cache")
                verdicts = chain.apply(items)
                seconds = time.perf_counter() - started
                dropped = {v.item_id: v.details for v in verdicts if not v.kept}
                verbatim = sum(f"item-{i}" in dropped for i in range(len(planted)))
                reworded = sum(f"item-{100 + i}" in dropped for i in range(len(planted)))
                flagged = [(i, q, a) for i, (q, a) in enumerate(clean) if f"item-{1000 + i}" in dropped]
                false = [
                    (i, q)
                    for i, q, a in flagged
                    if answer_of.get(dropped[f"item-{1000 + i}"]["benchmark_question"]) != normalize_answer(a)
                ]
                print(
                    f"{layout:15s} answers={'yes' if answers else 'no ':3s}  verbatim {verbatim}/{len(planted)}  "
                    f"reworded {reworded}/{len(planted)}  false positives {len(false)}/{len(clean)} "
                    f"(+{len(flagged) - len(false)} flagged with the same answer)  {len(items) / seconds:,.0f} items/s"
                )
                if not answers and last is None:
                    last = (reworded / len(planted), len(false) / max(1, len(clean)))
        print(f"contamination recall_reworded={last[0]:.3f} false_positive={last[1]:.4f}")


if __name__ == "__main__":
    main()

"""Re-measure the world estimate against readers' past ratings: for every rated item whose record the
audit sheets keep (`docs/audit-examples/round-*/*/items.jsonl` beside `ratings.csv`), the estimated
answers under the current code and the world settings given, and how many items it would now call
ambiguous, by the readers' rating. A change to the estimate is worth keeping when it flags bad
items and leaves good ones.

    python scripts/recheck_audits.py                         # the shipped settings
    python scripts/recheck_audits.py narrowing=3             # WorldConfig fields, key=number
    python scripts/recheck_audits.py --examples docs/audit-examples --show 10

Reads the bundled graph and its override file; writes nothing (the recipe's data root is a
temporary folder).
"""

import argparse
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from synth.audit.sheets import SheetRow, read_sheet
from synth.kg.multiplicity import WorldModel
from synth.pipelines.context import RunContext
from synth.pipelines.multihop import Config, MultihopRecipe
from synth.schemas import Item
from synth.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def rated_records(folder: Path) -> list[tuple[Item, SheetRow, str]]:
    """(item, its rating as `synth audit import` reads it, the sheet's folder) for every sheet that
    keeps its items' records."""
    found = []
    for records in sorted(folder.glob("round-*/*/items.jsonl")):
        ratings = {row.sheet_id: row for row in read_sheet(records.parent / "ratings.csv")}
        for line in records.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record["sheet_id"] in ratings:
                sheet = f"{records.parent.parent.name}/{records.parent.name}"
                found.append((Item.model_validate(record["item"]), ratings[record["sheet_id"]], sheet))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("settings", nargs="*", help="WorldConfig fields to change, as key=number")
    parser.add_argument("--examples", type=Path, default=ROOT / "docs" / "audit-examples")
    parser.add_argument("--show", type=int, default=10, help="Flagged items printed.")
    arguments = parser.parse_args()
    try:
        changes = {key: float(value) for key, value in (setting.split("=", 1) for setting in arguments.settings)}
    except ValueError:
        sys.exit("settings are key=number, e.g. narrowing=3")
    records = rated_records(arguments.examples)
    if not records:
        sys.exit(f"no items.jsonl beside a ratings.csv under {arguments.examples}: `synth audit sample` writes them")
    with tempfile.TemporaryDirectory() as home:
        recipe = MultihopRecipe(Config(n=1), RunContext(Settings(home=Path(home))))
        unknown = set(changes) - set(type(recipe.config.multiplicity).model_fields)
        if unknown:
            sys.exit(f"not a WorldConfig field: {', '.join(sorted(unknown))}")
        config = recipe.config.multiplicity.model_copy(update=changes)
        world = WorldModel(recipe.kg, config)
        estimated = [(world.answers(item.constraints), item, row, sheet) for item, row, sheet in records]
    flagged = [entry for entry in estimated if entry[0] > config.max_answers]
    ratings = Counter(row.rating for _, _, row, _ in estimated)
    flagged_ratings = Counter(row.rating for _, _, row, _ in flagged)
    print(f"world settings changed: {changes or 'none'}; rated items with records: {len(estimated)}")
    print(f"{'rating':<8} {'items':>6} {'now ambiguous':>14}")
    for label in ("good", "ok", "bad"):
        print(f"{label:<8} {ratings[label]:>6} {flagged_ratings[label]:>14}")
    only_no = sum(row.only is False for _, _, row, _ in estimated)
    flagged_only_no = sum(row.only is False for _, _, row, _ in flagged)
    print(f"{'only=no':<8} {only_no:>6} {flagged_only_no:>14}")
    for answers, item, row, sheet in sorted(flagged, key=lambda entry: -entry[0])[: arguments.show]:
        print(f"  {answers:6.2f} {row.rating:<4} {sheet:<20} {item.question[:90]}")


if __name__ == "__main__":
    main()

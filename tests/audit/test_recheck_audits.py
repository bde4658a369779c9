"""scripts/recheck_audits.py reads the rated items the audit sheets keep: every items.jsonl beside a
ratings.csv, matched by sheet id (a record without a rating is left out)."""

import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from recheck_audits import rated_records  # noqa: E402

from synth.schemas import Hop, Item, Provenance  # noqa: E402


def _item(number: int) -> Item:
    return Item(
        id=f"item-{number}",
        question=f"Which film is number {number}?",
        answer=f"Film {number}",
        recipe="multihop",
        hops=1,
        path=[Hop(head="/a", relation="r", tail=f"/f/{number}")],
        provenance=Provenance(generator="multihop", seed=0),
    )


def test_the_rated_records_are_read_beside_their_ratings(tmp_path):
    sheet = tmp_path / "round-30" / "plain"
    sheet.mkdir(parents=True)
    records = [{"sheet_id": f"s-0{number}", "item": _item(number).model_dump(mode="json")} for number in (1, 2)]
    (sheet / "items.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records))
    with open(sheet / "ratings.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["id", "rating", "right", "only"])
        writer.writeheader()
        writer.writerow({"id": "s-01", "rating": "bad", "right": "yes", "only": "no"})  # s-02 was not rated
    (read,) = rated_records(tmp_path)
    item, row, where = read
    assert item.answer == "Film 1" and row.rating == "bad" and row.only is False and where == "round-30/plain"
    assert rated_records(tmp_path / "nothing") == []

"""`synth audit` round trip: sample the sheets, import a reader's ratings, have a served judge read
blind then revealed, and find the verdicts in SQL, `datasets show`, the card and the browse pages;
a bad sheet is one line and stores nothing."""

import csv
import json
import sys
import urllib.request
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "browse"))
sys.path.insert(0, str(TESTS / "llm"))
from browse_store import make_store  # noqa: E402
from competent_server import CompetentServer  # noqa: E402

from synth.audit.commands import SampleRequest, judge  # noqa: E402
from synth.audit.sample import read_items  # noqa: E402
from synth.store.audits import audits_dir  # noqa: E402
from synth.store.catalog import Catalog  # noqa: E402


@pytest.fixture
def store(settings):
    make_store(settings)
    return settings


def _sheet(folder: Path, name: str) -> list[dict]:
    with open(folder / name, newline="") as handle:
        return list(csv.DictReader(handle))


def _write(path: Path, rows: list[dict]) -> Path:
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def _stored_audits(settings) -> list[Path]:
    return sorted(audits_dir(settings).glob("*/run.parquet"))


def _fill(rows: list[dict]) -> list[dict]:
    """A reader's ratings: the third item has a second real answer."""
    filled = []
    for number, row in enumerate(rows):
        other = number == 2
        filled.append(
            {
                **row,
                "answers": row["stored_answer"] + ("; Film X" if other else ""),
                "rating": ["G", "ok", "B", "good"][number % 4],
                "right": "yes",
                "only": "no" if other else "yes",
                "other_answers": "Film X" if other else "",
                "note": "Film X fits too" if other else "",
            }
        )
    return filled


def test_the_blind_sheet_holds_questions_only_and_a_seed_draws_the_same_sample(store, tmp_path, run_cli):
    code, out, _ = run_cli("audit", "sample", "films@1", "--n", "5", "--seed", "7", "--out", str(tmp_path / "a"))
    assert code == 0, out
    blind, reveal = _sheet(tmp_path / "a", "blind.csv"), _sheet(tmp_path / "a", "reveal.csv")
    assert [list(row) for row in blind[:1]] == [["id", "question", "answers"]]
    assert len(blind) == 5 and all(row["answers"] == "" for row in blind)
    with Catalog.open(store, read_only=True) as catalog:
        items = {item.question: item for item in read_items(store, catalog.resolve("films@1"))}
    answers = {item.answer for item in items.values()}
    assert not any(answer in row["question"] for row in blind for answer in answers)  # no answer is on it
    assert [row["stored_answer"] for row in reveal] == [items[row["question"]].answer for row in blind]
    assert all(" -[" in row["path"] for row in reveal)
    assert "rating: good" in (tmp_path / "a" / "rubric.md").read_text()
    records = [json.loads(line) for line in (tmp_path / "a" / "items.jsonl").read_text().splitlines()]
    assert [record["sheet_id"] for record in records] == [row["id"] for row in blind]  # kept from the reader
    assert [record["item"]["question"] for record in records] == [row["question"] for row in blind]
    assert [record["item"]["answer"] for record in records] == [row["stored_answer"] for row in reveal]
    assert all("constraints" in record["item"] and "path" in record["item"] for record in records)  # whole records
    run_cli("audit", "sample", "films@1", "--n", "5", "--seed", "7", "--out", str(tmp_path / "b"))
    assert _sheet(tmp_path / "b", "blind.csv") == blind
    run_cli("audit", "sample", "films@1", "--n", "5", "--seed", "8", "--out", str(tmp_path / "c"))
    assert _sheet(tmp_path / "c", "blind.csv") != blind
    code, _, err = run_cli("audit", "sample", "films@1", "--style", "haiku", "--out", str(tmp_path / "d"))
    assert code != 0 and "has no items with style haiku" in err and len(err.strip().splitlines()) == 1


def test_imported_ratings_are_views_figures_a_card_and_pages(store, tmp_path, run_cli):
    run_cli("audit", "sample", "films@1", "--n", "4", "--seed", "3", "--out", str(tmp_path / "s"))
    sheet = _write(tmp_path / "filled.csv", _fill(_sheet(tmp_path / "s", "reveal.csv")))
    code, out, err = run_cli("audit", "import", "films@1", str(sheet), "--reader", "ada", "--json")
    assert code == 0, err
    stored = json.loads(out)
    assert stored["stored"] and stored["audit"]["items"] == 4
    audit = stored["audit"]
    assert (audit["good"], audit["ok"], audit["bad"]) == (2, 1, 1)
    assert (audit["only_answer"], audit["only_answer_of"], audit["answer_right"]) == (3, 4, 4)
    only = audit["summary"]["all"]["only"]
    assert only["share"] == 0.75 and only["ci95"][0] < 0.75 < only["ci95"][1]
    # the same sheet again stores nothing twice
    code, out, _ = run_cli("audit", "import", "films@1", str(sheet), "--reader", "ada", "--json")
    assert code == 0 and not json.loads(out)["stored"] and len(_stored_audits(store)) == 1
    code, out, _ = run_cli(
        "sql",
        "select r.rating, r.only_answer, r.other_answers, i.answer from audit_ratings r join items i "
        "on i.id = r.item_id and i.version = r.version where r.rating = 'bad'",
        "--format",
        "json",
    )
    assert code == 0, out
    (row,) = json.loads(out)
    assert row["only_answer"] is False and "Film X" in str(row["other_answers"])
    code, out, _ = run_cli("sql", "select reader, reader_kind, seed from audits", "--format", "json")
    assert json.loads(out) == [{"reader": "ada", "reader_kind": "person", "seed": 3}]
    code, out, _ = run_cli("datasets", "show", "films@1", "--json")
    assert [run["id"] for run in json.loads(out)["audits"]] == [audit["id"]]
    code, out, _ = run_cli("datasets", "show", "films@1")
    assert "audits of films@1" in out and "75%" in out and "bad, answer right" in out
    code, out, _ = run_cli("datasets", "card", "films@1")
    assert "## What readers found" in out and "person: ada" in out
    from synth.browse.background import serving

    rated = next(row for row in _fill(_sheet(tmp_path / "s", "reveal.csv")) if row["other_answers"])
    with Catalog.open(store, read_only=True) as catalog:
        items = {item.question: item.id for item in read_items(store, catalog.resolve("films@1"))}
    with serving(store) as url:
        version_page = urllib.request.urlopen(f"{url}/v/films@1").read().decode()
        item_page = urllib.request.urlopen(f"{url}/v/films@1/items/{items[rated['question']]}").read().decode()
        other_version = urllib.request.urlopen(f"{url}/v/films@2").read().decode()
    assert 'id="audits"' in version_page and "person: ada" in version_page
    assert 'id="ratings"' in item_page and "Film X fits too" in item_page
    assert "No audit yet" in other_version


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda rows: rows[1].update(rating="great"), "rating 'great' is not on the scale good / ok / bad"),
        (lambda rows: rows[1].update(only="perhaps"), "only 'perhaps' is not yes / no"),
        (lambda rows: rows[2].update(id="ffffffff-01"), "id ffffffff-01 is on no sheet"),
        (lambda rows: rows[2].update(id=rows[1]["id"]), "is rated twice"),
        (lambda rows: [row.update(rating="") for row in rows], "no row has a rating"),
    ],
)
def test_a_bad_sheet_is_one_line_and_stores_nothing(store, tmp_path, run_cli, damage, message):
    run_cli("audit", "sample", "films@1", "--n", "4", "--seed", "3", "--out", str(tmp_path / "s"))
    rows = _fill(_sheet(tmp_path / "s", "reveal.csv"))
    damage(rows)
    code, _, err = run_cli("audit", "import", "films@1", str(_write(tmp_path / "bad.csv", rows)))
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1
    assert _stored_audits(store) == []


def test_a_sheet_of_another_version_names_the_right_command(store, tmp_path, run_cli):
    run_cli("audit", "sample", "films@1", "--n", "3", "--seed", "3", "--out", str(tmp_path / "s"))
    sheet = _write(tmp_path / "filled.jsonl.csv", _fill(_sheet(tmp_path / "s", "reveal.csv")))
    code, _, err = run_cli("audit", "import", "films@2", str(sheet))
    assert code != 0 and "from a sheet of films@1, not films@2" in err and "synth audit import films@1" in err
    assert _stored_audits(store) == []
    jsonl = tmp_path / "filled.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in _fill(_sheet(tmp_path / "s", "reveal.csv"))))
    code, _, err = run_cli("audit", "import", "films@1", str(jsonl))
    assert code == 0, err


def test_a_served_judge_reads_blind_then_revealed_and_is_kept_apart(store, tmp_path):
    with Catalog.open(store, read_only=True) as catalog:
        items = read_items(store, catalog.resolve("films@1"))
    server = CompetentServer("vllm").start_in_thread()
    try:
        server.learn(items)
        ambiguous = items[0]
        server.others[" ".join(ambiguous.question.split())] = ["Film X"]
        wrong = items[1]
        server.known[" ".join(wrong.question.split())] = ("Another Film", wrong.hops)
        flows = tmp_path / "flows.yaml"
        # no hedged twins: on a loaded machine a slow answer gets one, and the test counts requests
        judge_model = {"backend": "openai", "model": "judge", "endpoints": [server.url], "hedge": False}
        flows.write_text(json.dumps({"models": {"judge": judge_model}}))
        from synth.run.flows_file import declared_models

        request = SampleRequest(ref="films@1", n=len(items), seed=1)
        stored, calls = judge(store, request, "judge", declared_models(flows), log=lambda line: None)
        asked = calls["by_stage_model"]["audit_judge/openai:judge"]["sent"]
        again, calls_again = judge(store, request, "judge", declared_models(flows), log=lambda line: None)
    finally:
        server.stop()
    assert asked == 2 * len(items), calls  # each item read twice: blind, then revealed
    assert stored.stored and not again.stored and calls_again["llm_sent"] == 0  # the rerun pays for nothing
    run = stored.run
    assert run.reader_kind == "model" and run.reader == "judge" and run.items == len(items)
    by_item = {rating.item_id: rating for rating in stored.ratings}
    assert by_item[ambiguous.id].only_answer is False and by_item[ambiguous.id].other_answers == ["Film X"]
    assert by_item[ambiguous.id].reader_answers == [ambiguous.answer, "Film X"]  # named before the reveal
    assert by_item[wrong.id].answer_right is False and by_item[wrong.id].rating == "bad"
    rest = [rating for item_id, rating in by_item.items() if item_id not in (ambiguous.id, wrong.id)]
    assert all(rating.rating == "good" and rating.only_answer and rating.answer_right for rating in rest)
    assert run.only_answer == len(items) - 1 and run.answer_right == len(items) - 1


def test_people_s_ratings_flag_the_relations_of_wrong_items_and_a_judge_s_do_not(store, tmp_path, run_cli):
    from collections import Counter

    from synth.audit.flags import RelationFlags, relation_flags
    from synth.kg.relation_profile import RelationProfiles
    from synth.kg.snapshot import load_snapshot

    run_cli("audit", "sample", "films@1", "--n", "8", "--seed", "3", "--out", str(tmp_path / "s"))
    rows = _fill(_sheet(tmp_path / "s", "reveal.csv"))
    with Catalog.open(store, read_only=True) as catalog:
        version = catalog.resolve("films@1")
        items = {item.question: item for item in read_items(store, version)}
    for row in rows:  # every two-hop item (directed, then released in) rests on a wrong fact
        row["right"] = "no" if len(items[row["question"]].path) == 2 else "yes"
    denied = next(items[row["question"]] for row in rows if row["right"] == "no").path[-1]
    for row in rows:  # the reader's note denies one fact of a wrong item, and names another in passing
        path = items[row["question"]].path
        if row["right"] == "no" and denied in path:
            row["note"] = f"{denied.head} was not {denied.relation} {denied.tail}; {path[0].head}"
    run_cli("audit", "import", "films@1", str(_write(tmp_path / "filled.csv", rows)), "--reader", "ada")
    code, _, err = run_cli("audit", "judge", "films@1", "--model", "fake", "--n", "8", "--seed", "3")
    assert code == 0, err  # the dry-run judge calls every answer wrong: not believed
    flags = relation_flags(store, version.kg_snapshot)
    two_hop = sum(len(item.path) == 2 for item in items.values())
    assert flags.rated["released in"] == flags.flagged["released in"] == two_hop
    assert flags.rated["directed"] == len(items) and flags.flagged["directed"] == two_hop
    assert (flags.items_rated, flags.items_flagged) == (len(items), two_hop)
    assert not flags.wrong_facts  # without the graph's names no note is read
    named = relation_flags(store, version.kg_snapshot, names=lambda entity: [entity])
    assert named.wrong_facts == {(denied.head, denied.relation, denied.tail)}
    # a relation caught out well above the rest is dropped, with the audits as its reason
    tiny = load_snapshot(TESTS / "fixtures" / "tiny_kg")
    caught = RelationFlags(Counter({"directed": 4}), Counter({"directed": 5, "born_in": 20}), 4, 20)
    profiles = RelationProfiles(tiny, flags=caught, overrides={})
    assert not profiles("directed", "forward").trusted and "audits: 4 of 5" in profiles("directed", "forward").reason
    assert profiles("born_in", "forward").trusted


def test_bad_is_also_read_among_the_items_whose_answer_the_reader_found_right():
    """A wrong fact makes an item bad whatever the construction does: "bad, answer right" is the
    construction's own share, and it leaves out items whose right was not said."""
    from synth.audit.summary import figures
    from synth.schemas import AuditRating

    def rated(number: int, rating: str, right: bool | None) -> AuditRating:
        return AuditRating(
            audit_id="a", sheet_id="s", item_id=f"i{number}", dataset="d", version=1, rating=rating, answer_right=right
        )

    ratings = [rated(0, "bad", False), rated(1, "bad", True), rated(2, "good", True), rated(3, "ok", True)]
    ratings.append(rated(4, "bad", None))
    summary = figures(ratings)
    assert summary["bad_share"]["hits"] == 3 and summary["bad_share"]["of"] == 5
    assert (summary["bad_when_right"]["hits"], summary["bad_when_right"]["of"]) == (1, 3)
    assert summary["bad_when_right"]["ci95"][0] < 1 / 3 < summary["bad_when_right"]["ci95"][1]

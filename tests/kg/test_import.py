"""`synth kg import`: real layouts in, every line accounted for, the same graph out."""

import gzip
import json
from pathlib import Path

import pytest

from synth.errors import ConfigError
from synth.kg.importer import ImportSource, import_graph
from synth.kg.snapshot import bundled_path, load_kg, load_snapshot
from synth.kg.store import list_snapshots, load_graph

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "tiny_kg"


def test_the_shipped_graph_imports_whole_and_loads_identically(tmp_path):
    report = import_graph("fb", ImportSource.from_folder(bundled_path()), tmp_path)
    manifest = json.loads((bundled_path() / "manifest.json").read_text())["counts"]
    assert (report.triples, report.entities, report.relations) == (
        manifest["triples"],
        manifest["entities"],
        manifest["relations"],
    )
    assert not report.problems and report.duplicate_triples == 0 and report.auto_phrased_relations == 0
    imported, bundled = load_graph(Path(report.path)), load_snapshot()
    assert imported.node_ids == bundled.node_ids and imported.relation_ids == bundled.relation_ids
    assert (imported.out_index.neighbors == bundled.out_index.neighbors).all()
    assert imported.relations == bundled.relations
    assert imported.entities["/m/09c7w0"].name == "United States of America"
    assert imported.aliases("/m/016ywr") == bundled.aliases("/m/016ywr") == ["Jeremy John Irons"]


def test_aliases_come_from_a_named_column_or_a_json_list(tmp_path):
    (tmp_path / "edges.tsv").write_text("Q1\tdirected_by\tQ2\nQ3\tdirected_by\tQ2\n")
    (tmp_path / "names.tsv").write_text(
        "id\tname\tdescription\taliases\nQ1\tThe Film\tA film.\tFilm One|The First Film\nQ2\tAnna\t\t\n"
    )
    kg = load_graph(
        Path(import_graph("named", ImportSource(tmp_path / "edges.tsv", tmp_path / "names.tsv"), tmp_path / "kg").path)
    )
    assert kg.aliases("Q1") == ["Film One", "The First Film"] and kg.aliases("Q2") == [] and kg.aliases("Q3") == []
    (tmp_path / "names.jsonl").write_text(
        json.dumps({"id": "Q2", "label": "Anna", "aliases": ["Anna Director", " "]}) + "\n"
    )
    kg = load_graph(
        Path(
            import_graph("listed", ImportSource(tmp_path / "edges.tsv", tmp_path / "names.jsonl"), tmp_path / "kg").path
        )
    )
    assert kg.aliases("Q2") == ["Anna Director"]
    # without a header a third field is the description, never aliases, even with the separator in it
    (tmp_path / "plain.tsv").write_text("Q1\tThe Film\tA film | with a bar.\n")
    kg = load_graph(
        Path(import_graph("plain", ImportSource(tmp_path / "edges.tsv", tmp_path / "plain.tsv"), tmp_path / "kg").path)
    )
    assert kg.entities["Q1"].description == "A film | with a bar." and kg.aliases("Q1") == []


def test_pipe_separated_triples_with_a_separate_name_table(tmp_path):
    (tmp_path / "edges.txt").write_text(
        "Q1|directed_by|Q2\n"
        "Q3|directed_by|Q2\n"
        "Q1|located_in\n"  # line 3: a field short
        "\n"
        "Q4||Q2\n"  # line 5: empty relation
        "Q1|directed_by|Q2\n"  # duplicate of line 1
        "Q2|capital_of|Q5|extra\n"  # line 7: a field too many
        "Q2|capital_of|Q5\n"
    )
    (tmp_path / "names.tsv").write_text(
        "Q1\tThe Film\tA film.\nQ2\tAnna Director\nQ3\tSecond Film\tSequel\twith a tab\nQ1\tDuplicate\n"
    )
    source = ImportSource(triples=tmp_path / "edges.txt", entities=tmp_path / "names.tsv")
    report = import_graph("wiki-small", source, tmp_path / "kg")

    assert report.lines["triples"] == 4 and report.triples == 3 and report.duplicate_triples == 1
    assert report.problems == {
        ("triples", "wrong_field_count"): 2,
        ("triples", "empty_field"): 1,
        ("entities", "duplicate_id"): 1,
    }
    assert [(problem.line, problem.reason) for problem in report.examples[:3]] == [
        (3, "wrong_field_count"),
        (5, "empty_field"),
        (7, "wrong_field_count"),
    ]
    assert report.unnamed_entities == 1  # Q5
    kg = load_graph(Path(report.path))
    assert kg.neighbors("Q2", "directed_by", "inverse") == ["Q1", "Q3"]
    assert kg.entities["Q1"].name == "The Film"  # the first row for an id wins
    assert kg.entities["Q3"].description == "Sequel\twith a tab"
    assert (kg.relations["directed_by"].forward, kg.relations["directed_by"].inverse) == ("was directed by", "directed")
    assert kg.relations["capital_of"].forward == "is the capital of"
    assert kg.name("Q5") == "Q5"
    assert [row["name"] for row in list_snapshots(tmp_path / "kg")] == ["wiki-small"]


def test_jsonl_triples_with_subject_predicate_object_keys(tmp_path):
    lines = [
        json.dumps({"subject": "a", "predicate": "knows", "object": "b"}),
        "{not json",
        json.dumps({"subject": "b", "object": "c"}),
        json.dumps(["a", "knows", "c"]),
        json.dumps({"h": "b", "r": "knows", "t": "c"}),
    ]
    path = tmp_path / "triples.jsonl.gz"
    with gzip.open(path, "wt") as handle:
        handle.write("\n".join(lines) + "\n")
    report = import_graph("social", ImportSource(triples=path), tmp_path)
    assert report.triples == 2
    assert report.problems == {
        ("triples", "invalid_json"): 1,
        ("triples", "missing_key"): 1,
        ("triples", "not_an_object"): 1,
    }
    assert report.auto_phrased_relations == 1


def test_column_order_and_a_header_row_are_understood(tmp_path):
    (tmp_path / "a.csv").write_text("subject,object,predicate\nx,y,likes\n")
    (tmp_path / "b.tsv").write_text("x\ty\tlikes\n")
    with_header = load_graph(Path(import_graph("a", ImportSource(triples=tmp_path / "a.csv"), tmp_path).path))
    ordered = load_graph(
        Path(
            import_graph(
                "b", ImportSource(triples=tmp_path / "b.tsv", columns=("head", "tail", "relation")), tmp_path
            ).path
        )
    )
    assert with_header.has_edge("x", "likes", "y") and ordered.has_edge("x", "likes", "y")


def test_a_file_with_no_valid_line_is_a_clear_error_and_leaves_nothing(tmp_path):
    (tmp_path / "bad.tsv").write_text("only-one-field\nstill one\n")
    with pytest.raises(ConfigError, match=r"no valid triple in 2 non-blank lines; line 1: wrong_field_count"):
        import_graph("bad", ImportSource(triples=tmp_path / "bad.tsv"), tmp_path / "kg")
    assert not list((tmp_path / "kg").iterdir())


def test_cli_import_info_list_and_errors(run_cli, tmp_path):
    code, out, _ = run_cli("kg", "import", "tiny", "--folder", str(TINY))
    assert code == 0 and "imported tiny" in out
    code, out, _ = run_cli("kg", "info", "tiny", "--json")
    facts = json.loads(out)
    assert code == 0 and facts["triples"] == load_snapshot(TINY).num_triples
    assert sum(bucket["entities"] for bucket in facts["degree_histogram"]) == facts["entities"]
    code, out, _ = run_cli("kg", "list", "--json")
    assert [row["name"] for row in json.loads(out)] == ["tiny"]
    code, _, err = run_cli("kg", "import", "tiny", "--folder", str(TINY))
    assert code != 0 and "pass --replace" in err
    code, _, err = run_cli("kg", "info", "nope")
    assert code != 0 and "knowledge graph 'nope' is neither a path nor an imported graph (imported: tiny)" in err


def test_load_kg_resolves_names_folders_and_the_default(tmp_path):
    import_graph("tiny", ImportSource.from_folder(TINY), tmp_path)
    assert load_kg("tiny", tmp_path).num_triples == load_kg(str(TINY), tmp_path).num_triples
    assert load_kg(None, tmp_path).snapshot.startswith("fb15k237-")

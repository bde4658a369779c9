"""Near-duplicates, contamination against evaluation files, and one-search shortcuts."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synth.errors import ConfigError, InputFileError, NotFoundError
from synth.evalsets import load_benchmark
from synth.filters.base import FilterChain
from synth.filters.contamination import ContaminationConfig, ContaminationFilter
from synth.filters.near_dup import NearDupConfig, NearDupFilter
from synth.filters.shortcut import ShortcutFilter
from synth.schemas import Document, Hop
from synth.search.corpus import Corpus
from synth.search.retrieval import BM25Retriever

QUESTIONS = [
    "Which film was directed by a person who was born in Springfield and won an Academy Award?",
    "Which city is the capital of a country that borders Austria and has the official language German?",
    "Which musical instrument is played by a composer who composed the music for a film about werewolves?",
    "Which sports team has the team color green and is based in a city that hosted the 1984 Summer Olympics?",
    "Which university was founded in a place that is the birthplace of a physicist who won the Nobel Prize?",
]
PARAPHRASES = [  # light rewordings, as a careless second run or a second generator would make
    "Which movie was directed by a person who was born in Springfield and won an Academy Award?",
    "What city is the capital of a country that borders Austria and has the official language German?",
]


def items_for(make_item, questions, offset=0):
    return [
        make_item(offset + index, question=question, answer=f"Answer {offset + index}", aliases=[])
        for index, question in enumerate(questions)
    ]


def test_near_duplicates_planted_in_a_batch_are_removed_and_counted(make_item):
    paraphrases = [
        item.model_copy(update={"answer": f"Answer {index}"})
        for index, item in enumerate(items_for(make_item, PARAPHRASES, offset=10))
    ]
    other_anchor = make_item(
        20, question=QUESTIONS[0].replace("Springfield", "Shelbyville"), answer="Answer 20", aliases=[]
    )
    batch = items_for(make_item, QUESTIONS) + paraphrases + [other_anchor]
    chain = FilterChain([NearDupFilter(NearDupConfig())])
    kept = chain.run(batch)
    assert [item.question for item in kept] == QUESTIONS + [
        other_anchor.question
    ]  # another anchor, another answer: kept
    assert chain.stages["near_dup"].dropped == {"near_duplicate": 2}
    dropped = [verdict for verdict in chain.verdicts if not verdict.kept]
    assert [verdict.details["duplicate_of"] for verdict in dropped] == ["item-0", "item-1"]
    assert all(0.6 <= verdict.details["similarity"] < 1 for verdict in dropped)


def test_near_duplicates_of_earlier_versions_are_named_as_such(make_item):
    near = NearDupFilter(NearDupConfig(), earlier=[("old-7", QUESTIONS[2], ["Answer 0"])])
    result = near.check(
        make_item(0, question=QUESTIONS[2].replace("werewolves", "a werewolf"), answer="Answer 0", aliases=[])
    )
    assert result[:2] == (False, "near_duplicate_of_earlier_version") and result[2]["duplicate_of"] == "old-7"
    assert near.check(make_item(1, question=QUESTIONS[3])) is True


def benchmark_rows():
    rows = [  # two restate generated questions (reworded), the rest are unrelated
        {
            "id": "bench-a",
            "question": "Which film was directed by someone born in Springfield who won an Academy Award?",
            "golden_answers": ["Answer 0"],
        },
        {
            "id": "bench-b",
            "question": "What sports team has the team color green and is based in a city that hosted the 1984 "
            "Olympics?",
            "golden_answers": ["answer 3"],
        },
        {
            "id": "bench-c",
            "question": "Who wrote the novel that the film Vertigo is based on?",
            "golden_answers": ["Boileau-Narcejac"],
        },
        {"id": "bench-d", "question": "Which city is the capital of France?", "golden_answers": ["Paris"]},
        {
            "id": "bench-e",
            "question": "Which river flows through the capital of Austria?",
            "golden_answers": ["Danube"],
        },
    ]
    return rows


def write_benchmark(path, rows):
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    elif path.suffix == ".json":
        path.write_text(json.dumps({"data": rows}))
    elif path.suffix == ".parquet":
        pq.write_table(pa.Table.from_pylist(rows), path)
    else:
        path.write_text(
            "qid,query,answer\n"
            + "".join(f'{row["id"]},"{row["question"]}",{row["golden_answers"][0]}\n' for row in rows)
        )
    return path


@pytest.mark.slow  # the embedding model
@pytest.mark.parametrize("name", ["bench.jsonl", "bench.json", "bench.parquet", "bench.csv"])
def test_contamination_catches_the_planted_questions_and_not_the_others(make_item, tmp_path, name):
    path = write_benchmark(tmp_path / name, benchmark_rows())
    chain = FilterChain([ContaminationFilter(ContaminationConfig(benchmarks=[path]))])
    kept = chain.run(items_for(make_item, QUESTIONS))
    assert [item.id for item in kept] == ["item-1", "item-2", "item-4"]
    hits = {verdict.item_id: verdict.details for verdict in chain.verdicts if not verdict.kept}
    assert {item_id: details["benchmark_id"] for item_id, details in hits.items()} == {
        "item-0": "bench-a",
        "item-3": "bench-b",
    }
    assert all(details["benchmark"] == name and details["answer_match"] for details in hits.values())


def test_a_reworded_question_with_another_answer_is_not_contamination(make_item, tmp_path):
    path = write_benchmark(tmp_path / "b.jsonl", [dict(benchmark_rows()[0], golden_answers=["Something else"])])
    assert ContaminationFilter(ContaminationConfig(benchmarks=[path])).check(items_for(make_item, QUESTIONS)[0]) is True
    verbatim = make_item(0, question=benchmark_rows()[0]["question"], answer="Other", aliases=[])
    assert ContaminationFilter(ContaminationConfig(benchmarks=[path])).check(verbatim)[1] == "contaminated"


def test_benchmark_files_give_clear_errors(tmp_path):
    with pytest.raises(NotFoundError, match="does not exist"):
        load_benchmark(tmp_path / "missing.jsonl")
    (tmp_path / "odd.jsonl").write_text('{"text": "no question here"}\n')
    with pytest.raises(InputFileError, match="row 1 has no question"):
        load_benchmark(tmp_path / "odd.jsonl")
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(ConfigError, match="no rows with a question field"):
        load_benchmark(tmp_path / "empty.jsonl")
    squad = tmp_path / "squad.jsonl"
    squad.write_text(json.dumps({"question": "Q?", "answers": {"text": ["A", "B"]}}) + "\n")
    assert load_benchmark(squad)[0].answers == ("A", "B") and load_benchmark(squad)[0].id == "1"


def test_shortcut_drops_items_whose_evidence_one_search_finds(make_item, tmp_path):
    corpus = Corpus(
        [
            Document(
                id="d1", title="Alice Ames", text="Alice Ames was born in Springfield. Alice Ames directed First Light."
            ),
            Document(id="d2", title="First Light", text="First Light is a drama film directed by Alice Ames."),
            Document(id="d3", title="Bob Burns", text="Bob Burns was born in Shelbyville."),
            Document(id="d4", title="Second Wind", text="Second Wind is a comedy directed by Bob Burns."),
        ],
        name="t",
    )
    path = [
        Hop(head="/p/a", relation="born_in", tail="/c/s", direction="inverse", evidence_doc_id="d1"),
        Hop(head="/p/a", relation="directed", tail="/f/1", evidence_doc_id="d2"),
    ]
    easy = make_item(
        0,
        question="Which film did Alice Ames, born in Springfield, direct?",
        answer="First Light",
        aliases=[],
        path=path,
    )
    hard = make_item(
        1,
        question="Which film was directed by a person born in a town next to Shelbyville?",
        answer="First Light",
        aliases=[],
        path=path,
    )
    shortcut = ShortcutFilter(corpus, BM25Retriever(corpus, tmp_path, log=lambda line: None), k=2)
    easy_verdict, hard_verdict = shortcut.apply([easy, hard])
    assert (easy_verdict.kept, easy_verdict.reason) == (False, "one_search_shortcut")
    assert sorted(easy_verdict.details["hop_ranks"]) == [1, 2] and easy_verdict.details["answer_rank"] in (1, 2)
    assert hard_verdict.kept and None in hard_verdict.details["hop_ranks"]

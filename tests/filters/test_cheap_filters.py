import pytest

from synth.contract.matching import mentions
from synth.filters.base import FilterChain
from synth.filters.dedup import ExactDedupFilter
from synth.filters.format import FormatConfig, FormatFilter
from synth.filters.leakage import LeakageFilter

NAMES = {"/m/town0": "Town 0", "/m/person0": "Ada Lovelace", "/m/film0": "Film 0"}


def leakage():
    return LeakageFilter(lambda entity_id: NAMES.get(entity_id, entity_id))


def test_mentions_respects_word_boundaries_and_normalization():
    assert mentions("Who was born in Paris?", "paris")
    assert not mentions("Which Parisian painter?", "Paris")
    assert mentions("Which film by the Zoë Band?", "Zoe Band")
    # a name with a possessive in it is found as itself, and a possessive of a name still counts
    assert mentions("Who directed A Bug's Life (1998)?", "A Bug's Life")
    assert mentions("Name Coolio's birthplace.", "Coolio") and not mentions("Name Coolio's birthplace.", "Coolios")


def test_leakage_of_the_answer_or_an_alias(make_item):
    assert leakage().check(make_item(0)) is True
    assert leakage().check(make_item(0, question="Was Film 0 directed by someone born in Town 0?"))[:2] == (
        False,
        "answer_in_question",
    )
    assert leakage().check(make_item(0, question="Is The Film 0 directed by someone from Town 0?"))[:2] == (
        False,
        "answer_in_question",
    )


def test_leakage_of_a_hidden_intermediate(make_item):
    item = make_item(0, question="Which film was directed by Ada Lovelace, born in Town 0?")
    kept, reason, details = leakage().check(item)
    assert (kept, reason, details["entity"]) == (False, "intermediate_in_question", "/m/person0")


@pytest.mark.parametrize(
    "question, answer, reason",
    [
        ("Which film?", "Film 0", "question_too_short"),
        ("Which film was directed by the person born in Town 0.", "Film 0", "not_a_question"),
        ("Which film was directed by someone? And who was born in Town 0?", "Film 0", "several_questions"),
        ("Which film was directed by the person born in Town 0?", "a b c d e f g h i j k l m", "answer_too_long"),
    ],
)
def test_format_reasons(make_item, question, answer, reason):
    result = FormatFilter(FormatConfig()).check(make_item(0, question=question, answer=answer, aliases=[]))
    assert result[:2] == (False, reason)


def test_chain_counts_the_funnel_and_keeps_every_verdict(make_item):
    chain = FilterChain([FormatFilter(), leakage(), ExactDedupFilter()])
    items = [
        make_item(0),
        make_item(0),  # same construction id
        make_item(1, id="other-id", question=make_item(0).question),  # same question, other id
        make_item(2, question="Which film is Film 2?"),
        make_item(3, question="short?"),
    ]
    kept = chain.run(items)
    assert [item.id for item in kept] == ["item-0"]
    stages = {stage.stage: stage for stage in chain.stages.values()}
    assert (stages["format"].input, stages["format"].kept, stages["format"].dropped) == (
        5,
        4,
        {"question_too_short": 1},
    )
    assert stages["leakage"].dropped == {"answer_in_question": 1}
    assert stages["dedup"].dropped == {"duplicate_construction": 1, "duplicate_question": 1}
    dropped = [verdict for verdict in chain.verdicts if not verdict.kept]
    assert len(dropped) == 4 and all(verdict.reason for verdict in dropped)

"""The grammar lint flags the constructions seen in earlier template questions, and not good text."""

import pytest

from synth.filters.grammar_lint import PATTERNS, lint


@pytest.mark.parametrize(
    "question, pattern",
    [
        (
            "Which television program belongs to the genre a topic that is a genre of the film Philadelphia?",
            "article_before_article",
        ),
        ("Which company operates in the industry a genre that is a genre of Saw?", "article_before_article"),
        (
            "Which disease has the risk factor an ethnic group that is an ethnicity of Rachel Weisz?",
            "article_before_article",
        ),
        ("Which film has the in language English?", "article_before_preposition"),
        ("Which entity written an entity that is the target of 'starred actors' from Tom Hanks?", "generic_noun"),
        ("Which entity written an entity that is the target of 'starred actors' from Tom Hanks?", "bare_participle"),
        ("Which entity written an entity that is the target of 'starred actors' from Tom Hanks?", "relation_id"),
        ("Which time zone is a time zone of a place that contains Iowa State University?", "repeated_noun"),
        ("Which film genre is a genre of a film that was shot on 35 mm film?", "repeated_noun"),
        ("What is located in the country that is the country of citizenship of Heath Ledger?", "repeated_noun"),
        (
            "Which sports team is based in a place that is located in a place that was a location of a war that "
            "involved Cherokee?",
            "stacked_clauses",
        ),
    ],
)
def test_each_pattern_catches_the_construction_it_was_written_for(question, pattern):
    assert pattern in lint(question) and pattern in PATTERNS


@pytest.mark.parametrize(
    "question",
    [
        "Where does the Merrimack River start in the state where the Kraus House is located?",
        "Which genre of Saw is also a genre of a film directed by Ridley Scott?",
        "Name the time zone of the place containing Merv Griffin's burial place.",
        "Who was born in Steve Carell's birthplace and has the profession Poet?",
        "In which country was the film Bend It Like Beckham made?",
        "What language is spoken by an ethnic group found in Quebec and is spoken by Daniel Wu?",
    ],
)
def test_natural_questions_are_clean(question):
    assert lint(question) == []


def test_names_are_masked_so_their_words_never_count():
    question = "Which film was directed by The The and starred in The Entity?"
    assert "generic_noun" in lint(question)
    assert lint(question, names=["The The", "The Entity"]) == []

"""The English helpers of the template phrasing."""

from synth.generators import grammar


def test_passive_and_active_phrases_reduce_to_relative_clauses_without_that():
    assert grammar.reduced_relative("was directed by") == "directed by"
    assert grammar.reduced_relative("is located in") == "located in"
    assert grammar.reduced_relative("has been signed to") == "signed to"
    assert grammar.reduced_relative("died in") is None
    assert grammar.reduced_active("contains Paris") == "containing Paris"
    assert grammar.reduced_active("derives from Jazz") == "deriving from Jazz"
    assert grammar.reduced_active("has the capital Paris") == "with the capital Paris"
    assert grammar.reduced_active("has played music by X") is None and grammar.reduced_active("died in X") is None
    assert grammar.reduced_active("has had the capital X") is None  # not "with had the capital X"


def test_an_object_noun_gives_way_to_a_description_and_shared_phrases_merge():
    assert grammar.without_object_noun("belongs to the genre") == "belongs to"
    assert grammar.without_object_noun("has the first-level division") == "has"
    assert grammar.without_object_noun("is the birthplace of") == "is the birthplace of"
    assert grammar.without_object_noun("is the country containing") == "is the country containing"  # a verb ends it
    assert grammar.merge_shared(["is a genre of Saw", "is a genre of a film directed by X"]) == [
        "is a genre of both Saw and a film directed by X"
    ]
    assert grammar.merge_shared(["was born in Paris", "died in Rome"]) == ["was born in Paris", "died in Rome"]
    # the plain object first, so the last "and" cannot seem to join the inner clause (a reader misread
    # "both the person who composed ... and influenced ... and Leon Trotsky")
    assert grammar.merge_shared(
        ["is a citizen of the person who composed X and influenced Y", "is a citizen of Leon Trotsky"]
    ) == ["is a citizen of both Leon Trotsky and the person who composed X and influenced Y"]


def test_articles_possessives_and_in_which():
    assert grammar.with_article("actor", False) == "an actor" and grammar.with_article("film", True) == "the film"
    assert grammar.possessive("Steve Carell") == "Steve Carell's" and grammar.possessive("Dennis") == "Dennis'"
    assert grammar.in_which("was born in") == ("was", "born") and grammar.in_which("died in") is None
    assert grammar.join_and(["a", "b", "c"]) == "a, b and c"

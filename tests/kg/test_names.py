"""Names overlap when one, as whole words, is inside the other; aliases are names too."""

from synth.kg.names import NameOverlap, overlap


def test_a_name_inside_another_by_whole_words():
    assert overlap(["Newfoundland Time Zone"], ["Newfoundland"]) == "newfoundland"
    assert overlap(["University of Washington"], ["Washington"]) == "washington"
    assert overlap(["Free jazz"], ["Jazz"]) == "jazz"
    assert overlap(["Minnesota"], ["Minnesota Twins"]) == "minnesota"  # contained works both ways
    assert overlap(["Parisian"], ["Paris"]) is None
    assert overlap(["The Band"], ["Band of Horses"]) == "band"  # articles are not words of a name
    assert overlap(["Jeremy Irons"], ["Irons Works"]) is None
    assert overlap(["BC Lions"], ["B.C."]) == "bc"  # the leakage filter drops punctuation: "B.C." reads "bc"
    assert overlap(["Austria-Hungary"], ["Austria"]) == "austria"  # and a reader splits at the hyphen


def test_entities_overlap_through_their_aliases():
    names = {"a": ["Citigroup"], "b": ["Citi Field", "Citi"], "c": ["Shea Stadium"]}
    overlaps = NameOverlap(lambda entity: names[entity])
    assert overlaps.overlap("a", "b") is None
    names["a"] = ["Citigroup", "Citi"]
    overlaps = NameOverlap(lambda entity: names[entity])
    assert overlaps.overlap("a", "b") == "citi" and overlaps.any_overlap("b", ["c", "a"])
    assert not overlaps.any_overlap("c", ["a", "b"]) and overlaps.overlap("a", "a") is None

"""Held-out splits: every item is in train, validation or test, decided by its id alone.

An agent is trained on the train split and evaluated on the test split of the same world, so no
item may ever move between splits: the assignment is a hash of the item id (the same id in every
version, re-export and curated child), never the order of a version or a random draw. The hash is
cut into three ranges, test at the bottom and validation at the top, so raising one fraction only
moves items between that split and train and never between test and validation.

The same rule is written twice, in Python (`split_of`) and as DuckDB SQL (`split_sql`, for
exports' predicates and for `synth sql`); both compare the first 32 bits of an MD5 digest with
integer thresholds, so they agree exactly.
"""

import hashlib
from dataclasses import dataclass
from typing import Literal

from synth.errors import ConfigError

Split = Literal["train", "validation", "test"]
SPLITS: tuple[Split, ...] = ("train", "validation", "test")
CHOICES = (*SPLITS, "all")
"""What `--split` takes: one split, or every item."""

_SALT = "synth-split:"
_RANGE = 2**32


@dataclass(frozen=True)
class SplitFractions:
    """The shares of items held out; the rest is train. Changing them re-assigns items, so a team
    keeps them fixed (SYNTH_VALIDATION_FRACTION, SYNTH_TEST_FRACTION). A plain dataclass: the CLI
    imports this module for its choices, and must stay light."""

    validation: float = 0.05
    test: float = 0.1

    def __post_init__(self):
        if not (0 <= self.validation < 1 and 0 <= self.test < 1) or self.validation + self.test >= 1:
            raise ConfigError(
                f"split fractions validation={self.validation:g}, test={self.test:g} must each lie in [0, 1) and "
                "leave a train split (sum below 1)"
            )

    @property
    def test_below(self) -> int:
        """Hash values below this are test."""
        return round(self.test * _RANGE)

    @property
    def validation_from(self) -> int:
        """Hash values from this on are validation."""
        return _RANGE - round(self.validation * _RANGE)


def split_point(item_id: str) -> int:
    """The item's place in [0, 2**32): the first 32 bits of MD5 over a salted id."""
    return int(hashlib.md5(f"{_SALT}{item_id}".encode()).hexdigest()[:8], 16)


def split_of(item_id: str, fractions: SplitFractions) -> Split:
    point = split_point(item_id)
    if point < fractions.test_below:
        return "test"
    if point >= fractions.validation_from:
        return "validation"
    return "train"


def split_sql(column: str, fractions: SplitFractions) -> str:
    """A DuckDB expression naming the split of the item whose id is in `column`."""
    point = f"('0x' || substr(md5('{_SALT}' || {column}), 1, 8))::UBIGINT"
    return (
        f"(case when {point} < {fractions.test_below} then 'test' "
        f"when {point} >= {fractions.validation_from} then 'validation' else 'train' end)"
    )


def split_predicate(split: str, column: str, fractions: SplitFractions) -> str | None:
    """A SQL predicate keeping `split`'s items (None: `all`, no predicate)."""
    check_split(split)
    return None if split == "all" else f"{split_sql(column, fractions)} = '{split}'"


def check_split(split: str) -> None:
    if split not in CHOICES:
        raise ConfigError(f"unknown split {split!r}; choose one of {', '.join(CHOICES)}")

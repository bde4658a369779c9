"""Checks as configuration: a recipe's `checks` is a list of typed entries, and the list is the wiring.

Each check kind is one config class (a `CheckConfig` with a literal `kind` and a `build` that makes
its filter from a `CheckScope`, the run's view of the world); the kinds are registered once, in
`synth.filters.CHECK_KINDS`, and any of them can be switched on in any recipe by config alone:

    checks: [format, leakage, dedup, {kind: near_dup, threshold: 0.7}]   # the whole list, in order
    checks: {near_dup: {threshold: 0.7}, shortcut: {enabled: false}}     # changes to the recipe's list

A string entry is that kind with the recipe's defaults for it; a mapping changes only the entries
it names (a kind the recipe's list lacks is appended), as `--param checks.near_dup.threshold=0.7`
does. Run order is list order, as in datatrove's pipelines.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, SerializeAsAny

from synth.config import FrozenConfig, warn_moved
from synth.filters.base import Filter, FilterChain
from synth.schemas import Item
from synth.search.world import World
from synth.settings import Settings

Questions = list[tuple[str, str, list[str]]]
"""(item id, question, accepted answers): what duplicate checks compare new questions with."""


@dataclass
class CheckScope:
    """What a check may use when it is built: the run's settings and lazily made world, and what
    came before this batch (earlier versions of the dataset, earlier rounds of the run)."""

    settings: Settings
    world: Callable[[], World]
    retriever: str
    """The world's retriever (world.retriever), for checks that search and name none of their own."""
    names: Callable[[str], str] = lambda entity_id: entity_id
    """Entity id -> name, for the leakage check (a graph's names; identity where ids are names)."""
    earlier_questions: Callable[[], Questions] = list
    """The published versions of the dataset the run publishes to."""
    earlier_items: Sequence[Item] = ()
    """Items this run kept before this batch (self-play's earlier rounds)."""
    log: Callable[[str], None] = field(default=lambda message: None)


class CheckConfig(FrozenConfig):
    """One check's settings. Subclasses set `kind` to a literal and implement `build`."""

    kind: str
    enabled: bool = Field(default=True, description="Run this check.")
    summary: ClassVar[str] = ""
    """One line for `synth checks` and the reference docs."""

    def build(self, scope: CheckScope) -> Filter | None:
        """The filter (None when the check has nothing to do, e.g. contamination without benchmark files)."""
        raise NotImplementedError(f"check {self.kind} builds no filter")


KINDS: dict[str, type[CheckConfig]] = {}


def register_check(config: type[CheckConfig]) -> type[CheckConfig]:
    """Make a check kind known to every recipe's `checks` (usable as a class decorator)."""
    kind = config.model_fields["kind"].default
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"{config.__name__} needs a literal `kind` with a default, e.g. kind: Literal['x'] = 'x'")
    KINDS[kind] = config
    return config


def _entry(value: Any) -> Any:
    if isinstance(value, CheckConfig):
        return value
    if isinstance(value, str):
        value = {"kind": value}
    if not isinstance(value, dict) or "kind" not in value:
        raise ValueError(f"a check is a kind name or a mapping with `kind`, not {value!r}")
    kind = value["kind"]
    if kind not in KINDS:
        raise ValueError(f"unknown check {kind!r}; known: {', '.join(sorted(KINDS))}")
    return KINDS[kind].model_validate(value)


def _entries(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    entries = [_entry(entry) for entry in value]
    kinds = [entry.kind for entry in entries]
    repeated = sorted({kind for kind in kinds if kinds.count(kind) > 1})
    if repeated:
        raise ValueError(f"checks must name each kind once; repeated: {', '.join(repeated)}")
    return entries


Checks = Annotated[list[SerializeAsAny[CheckConfig]], BeforeValidator(_entries)]
"""The type of a recipe's `checks` field."""


def check_chain(checks: Sequence[CheckConfig], scope: CheckScope) -> FilterChain:
    """The enabled checks' filters, in list order."""
    built = (check.build(scope) for check in checks if check.enabled)
    return FilterChain([check for check in built if check is not None])


def find_check(checks: Sequence[CheckConfig], kind: str) -> CheckConfig | None:
    return next((check for check in checks if check.kind == kind), None)


def move_old_check_keys(values: Any, renamed: dict[str, tuple[str, str]] | None = None) -> Any:
    """A config mapping with the keys of before `checks` (top-level sections named after a check
    kind, `near_dup: {threshold: 0.7}`, and the `renamed` keys, old key -> (kind, key)) moved into
    `checks`, with one deprecation line each, so flows files written for them keep working. An old
    key means what its new key means: laid over the entry of its kind (a listed entry included,
    as `synth curate --checks` lists them), refused where a given list lacks that kind."""
    if not isinstance(values, dict):
        return values
    values = dict(values)
    moved: dict[str, dict] = {}
    for kind in [key for key in values if key in KINDS]:
        section = values.pop(kind)
        moved.setdefault(kind, {}).update(section if isinstance(section, dict) else {})
        warn_moved(kind, f"checks.{kind}")
    for old, (kind, key) in (renamed or {}).items():
        if old in values:
            moved.setdefault(kind, {})[key] = values.pop(old)
            warn_moved(old, f"checks.{kind}.{key}")
    if not moved:
        return values
    given = values.get("checks")
    if given is None or isinstance(given, dict):
        merged = dict(given or {})
        for kind, change in moved.items():
            merged[kind] = {**change, **(merged.get(kind) or {})}
        values["checks"] = merged
    elif isinstance(given, list):  # as `checks.<kind>.<key>` does: laid over the listed entry
        listed = [entry if not isinstance(entry, str) else {"kind": entry} for entry in given]
        kinds = {entry.get("kind") for entry in listed if isinstance(entry, dict)}
        missing = [kind for kind in moved if kind not in kinds]
        if missing:
            raise ValueError(
                f"{missing[0]}: the checks list given has no entry of kind {missing[0]!r}; add it to the list "
                f"(synth curate --checks ...,{missing[0]}) or leave the checks at their defaults"
            )
        values["checks"] = [
            {**entry, **moved.get(str(entry.get("kind")), {})} if isinstance(entry, dict) else entry for entry in listed
        ]
    return values

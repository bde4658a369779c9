"""A generated question with its verified answer and the privileged information behind it."""

from typing import Literal

from pydantic import Field, model_validator

from synth.schemas.base import JsonDict, NonBlank, Record, SnakeCase

Direction = Literal["forward", "inverse"]
DifficultyOrUnlabeled = Literal["trivial", "easy", "medium", "hard", "unsolved", "unlabeled"]


class Hop(Record):
    """One knowledge-graph edge of the construction path, as stored in the graph."""

    head: NonBlank
    relation: NonBlank
    tail: NonBlank
    direction: Direction = "forward"
    """"forward" when the walk went head -> tail, "inverse" when it went tail -> head."""
    evidence_doc_id: str | None = None
    """A corpus document that states this edge, so a searcher can verify the hop."""


class Fact(Record):
    """A fact about an unnamed entity: stepping from the named `anchor` over `relation` in
    `direction` reaches it. Describes an intermediate by its own facts ("a person who won an
    Academy Award") instead of by name."""

    anchor: NonBlank
    relation: NonBlank
    direction: Direction = "forward"


class Step(Record):
    """Follow `relation` from the current entity set, in `direction`, to the next set."""

    relation: NonBlank
    direction: Direction = "forward"
    where: list[Fact] = Field(default_factory=list)
    """Facts the reached entities must also have: a branch of the question's subgraph that
    narrows an intermediate down without naming it."""


class Constraint(Record):
    """Entities reachable from a named anchor by a sequence of steps.

    An item's answer set is the intersection of its constraints' sets; a valid item has exactly
    one entity in it. Intermediates on a path are unnamed (existential), which is how
    obfuscated cues are checked against the graph.
    """

    anchor: NonBlank
    steps: list[Step] = Field(min_length=1)

    @property
    def named(self) -> list[str]:
        """Every entity the constraint names: its anchor, then the anchors of its facts."""
        return [self.anchor, *(fact.anchor for step in self.steps for fact in step.where)]


class Cue(Record):
    """One clue of the question, and how much it narrows the answer down on its own."""

    text: NonBlank
    constraint: int | None = None
    """Index into the item's constraints that this cue expresses, if any."""
    step: int | None = None
    """With `constraint`: the cue is a fact about the entity that step reaches, not the whole constraint."""
    candidates: int | None = None
    """How many entities in the graph satisfy this cue alone (higher = more oblique)."""


class Provenance(Record):
    """How an item was made, so any row can be traced and reproduced."""

    generator: NonBlank
    seed: int | None = None
    kg_snapshot: str | None = None
    verbalizer: str | None = None
    """"template", or the model name when an LLM phrased the question."""
    models: dict[str, str] = Field(default_factory=dict)
    """Role -> model name for every model that touched the item."""
    raw_output: str | None = None
    """The raw model output the question was parsed from, so a parser fix needs no regeneration."""


class Item(Record):
    """A question-answer pair with everything needed to verify, filter, label and train on it."""

    id: NonBlank
    """Content-derived: the same construction gives the same id, across runs and machines."""
    question: NonBlank
    answer: NonBlank
    aliases: list[str] = Field(default_factory=list)
    """Other surface forms of the answer that a scorer should accept."""
    recipe: SnakeCase
    hops: int = Field(ge=1)
    """The hops a solver needs: a graph item's effective hops (synth.kg.shortcuts; its chain's length is
    `len(path)` and metadata `chain_hops`), else the searches asked for."""
    answer_entity_id: str | None = None
    path: list[Hop] = Field(default_factory=list)
    """The construction path: privileged information, never shown to solvers."""
    constraints: list[Constraint] = Field(default_factory=list)
    cues: list[Cue] = Field(default_factory=list)
    evidence_doc_ids: list[str] = Field(default_factory=list)
    difficulty: DifficultyOrUnlabeled = "unlabeled"
    provenance: Provenance
    metadata: JsonDict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _hops_within_path(self) -> "Item":
        if self.path and self.hops > len(self.path):
            raise ValueError(f"hops is {self.hops} but the construction path has only {len(self.path)} edges")
        return self

    @property
    def answers(self) -> list[str]:
        """The answer followed by its aliases: every string a scorer should accept."""
        return [self.answer, *(alias for alias in self.aliases if alias != self.answer)]

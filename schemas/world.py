"""The world agents search: knowledge-graph entities, relations and triples, and corpus documents."""

from pydantic import Field

from synth.schemas.base import NonBlank, Record


class Entity(Record):
    """A knowledge-graph node with the text that names and describes it."""

    id: NonBlank
    name: NonBlank
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    """Other names that also refer to the entity; answers matching one of them count as correct."""


class Relation(Record):
    """A relation type, phrased in both directions so walkers may traverse an edge either way."""

    id: NonBlank
    forward: NonBlank
    """Verb phrase for `head {forward} tail`, e.g. "directed"."""
    inverse: str = ""
    """Verb phrase for `tail {inverse} head`, e.g. "was directed by"; "" where English has no
    mechanical inverse (questions then say "a city that Berlin is located in")."""
    head_type: str = ""
    """Noun for what heads are ("person"), used to obfuscate a named entity into a description."""
    tail_type: str = ""
    """Noun for what tails are ("film"): one vote towards each tail's noun (synth.kg.types)."""
    head_role: str = ""
    """Noun that makes "the {head_role} of {tail}" true ("director" for director -> film), or ""."""
    tail_role: str = ""
    """Noun that makes "the {tail_role} of {head}" true ("birthplace" for person -> place), or ""."""
    literal: bool = False
    """Tails are values (years, ratings, tags), not entities: used as cue values, never walked through."""


class Triple(Record):
    """One directed edge `head --relation--> tail` of the knowledge graph."""

    head: NonBlank
    relation: NonBlank
    tail: NonBlank


class Document(Record):
    """A corpus passage that search tools return and items cite as evidence."""

    id: NonBlank
    """Stable across rebuilds of the same world, so evidence ids stay valid."""
    title: NonBlank
    text: str
    entity_id: str | None = None
    """The entity this document is about, when the corpus was built from the knowledge graph."""
    document_id: str | None = None
    """The document this passage was cut from, when it is one of several (`open` returns that
    document whole); None when the passage is a whole document."""

"""The deterministic template verbalizer: the fallback when no LLM phrases questions, and the test baseline.

A constraint (anchor, steps) becomes a relative clause about the answer, built inside out with
indefinite descriptions for intermediates, which are never named:

    anchor Springfield, steps [place_of_birth (inverse), director/film (forward)]
    -> "was directed by a person who was born in Springfield"

An intermediate's own facts (`Step.where`) join its description with "and", before the chain
clause so nothing reads as being about a deeper entity: "a person who won the Academy Award and
who was born in Springfield". The question joins the
clauses of all constraints: "Which film <clause 1> and <clause 2>?" (", and" once a clause has
its own "and", so the last cue reads as being about the answer).
"""

from synth.kg.graph import FORWARD, KnowledgeGraph
from synth.schemas import Constraint, Fact, Step


def _article(noun: str) -> str:
    return "an" if noun[:1].lower() in "aeiou" else "a"


_PERSON_NOUNS = {
    "person", "person or character", "actor", "musician", "musical artist", "writer", "screenwriter",
    "film director", "film producer", "film editor", "composer", "cinematographer", "costume designer",
    "art director", "production designer", "set designer", "philosopher", "impressionist",
}


def _pronoun(noun: str) -> str:
    return "who" if noun in _PERSON_NOUNS else "that"


def _drop_repeated_noun(phrase: str, noun: str) -> str:
    """"produced the film" before "a film that ..." -> "produced": the description says it."""
    head, separator, tail = phrase.rpartition(" the ")
    if separator and head and set(tail.split()) <= set(noun.split()):
        return head
    return phrase


class TemplateVerbalizer:
    name = "template"

    def __init__(self, kg: KnowledgeGraph):
        self.kg = kg

    def entity_type(self, step: Step) -> str:
        """Noun for the entity a step arrives at."""
        relation = self.kg.relations[step.relation]
        noun = relation.tail_type if step.direction == FORWARD else relation.head_type
        return noun or "entity"

    def relative_clause(self, step: Step, previous: str, previous_noun: str | None = None) -> str:
        """What the entity a step arrives at does with respect to `previous` (a name, or a
        description whose head is `previous_noun`)."""
        relation = self.kg.relations[step.relation]
        phrase = relation.inverse if step.direction == FORWARD else relation.forward
        if previous_noun:
            phrase = _drop_repeated_noun(phrase, previous_noun)
        return f"{phrase} {previous}"

    def fact_clause(self, fact: Fact) -> str:
        """What the described entity does with respect to the fact's named anchor."""
        return self.relative_clause(Step(relation=fact.relation, direction=fact.direction), self.kg.name(fact.anchor))

    def clause(self, constraint: Constraint) -> str:
        description, described = self.kg.name(constraint.anchor), None
        for step in constraint.steps[:-1]:
            noun, pronoun = self.entity_type(step), _pronoun(self.entity_type(step))
            # Facts first: the nested chain clause must come last, or a fact would read as
            # describing the deeper entity ("a person who influenced a person who ... and who ...").
            parts = [*(self.fact_clause(fact) for fact in step.where), self.relative_clause(step, description, described)]
            description, described = f"{_article(noun)} {noun} {pronoun} " + f" and {pronoun} ".join(parts), noun
        last = constraint.steps[-1]
        return " and ".join([self.relative_clause(last, description, described), *(self.fact_clause(fact) for fact in last.where)])

    def question(self, constraints: list[Constraint] | tuple[Constraint, ...]) -> str:
        noun = self.entity_type(constraints[0].steps[-1])
        clauses = [self.clause(constraint) for constraint in constraints]
        last_joint = ", and " if any(" and " in clause for clause in clauses[:-1]) else " and "
        joined = clauses[0] if len(clauses) == 1 else ", ".join(clauses[:-1]) + last_joint + clauses[-1]
        return f"Which {noun} {joined}?"

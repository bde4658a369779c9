"""The deterministic template verbalizer: the default phrasing, and the baseline for LLM rephrasing.

A constraint (anchor, steps) describes the answer through a chain of unnamed entities. Each step
reads in the most compact form the relation allows:

- a role noun when the relation has one: "the birthplace of Steve Carell", "Steve Carell's
  birthplace", "a genre of Saw" ("the" only when the graph says exactly one entity fits);
- otherwise a description headed by the entity's own noun (synth.kg.types), with a reduced
  relative where the phrase is passive ("a film directed by Ridley Scott") and a full one where
  not ("a person who directed Alien"); a set whose noun is uncertain is "something"/"someone".

An intermediate's own facts (`Step.where`) come before the chain clause, so nothing reads as being
about a deeper entity: "a person who won the Academy Award and who was born in Springfield".

Questions open in several ways, chosen per item from a hash of its constraints (a rerun phrases
the same item the same way): "Which genre of Saw ...", "What is the capital of ...", "Name the
film that ...", "Who directed ...", "In which city was ... born?". The target is MuSiQue-like
brevity (about 16 words for 2-4 hops); `benchmarks/bench_phrasing.py` measures it.

A chain of `SENTENCES_FROM` hops or more would stack that many relative clauses into one noun
phrase, and so would a shorter one whose cues pile up three relative clauses in one sentence; either
is told instead as short sentences that build the description up one entity at a time, as
BrowseComp's questions do, after the answer's type: "Name the city these clues describe. A film
was directed by Christopher Nolan. A person composed the music for this film. ..."
"""

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synth.filters.grammar_lint import stacked_clauses
from synth.generators import grammar
from synth.hashing import content_hash
from synth.kg.display import shown_name
from synth.kg.graph import FORWARD, INVERSE, KnowledgeGraph
from synth.kg.names import sequences_of, token_sequences
from synth.kg.types import BROADER, EntityTypes
from synth.schemas import Constraint, Fact, Step

SENTENCES_FROM = 5
"""Chains of this many hops or more are told as sentences."""
SAMPLE = 24
"""Entities of a described set whose nouns are compared (the set's noun is the one they share)."""
POSSESSIVE_MAX_WORDS = 4
IN_WHICH_MAX_WORDS = 10


LIGHT_VERBS = frozenset({"has", "have", "had", "has had", "have had"})
"""Verbs that say nothing without their object noun ("has the county seat", "has had the capital")."""


@dataclass(frozen=True)
class Predicate:
    """What a constraint says about the entity its last step reaches."""

    text: str
    """Verb form, about the subject: "was directed by Ridley Scott", "is the capital of Texas"."""
    role: str = ""
    """The last step's role noun with its preposition ("genre of"), when the relation has one."""
    of: str = ""
    """With `role`: what the answer is the role of ("Saw")."""
    named: bool = False
    """`of` is a name, not a description."""
    definite: bool = False
    """With `role`: exactly one entity is the role of `of`."""
    place: tuple[str, str, str] | None = None
    """(auxiliary, participle, object) for "In which city was X born?"."""


class TemplateVerbalizer:
    name = "template"

    def __init__(self, kg: KnowledgeGraph, types: EntityTypes | None = None):
        self.kg = kg
        self.types = types or EntityTypes(kg)
        self._avoid: tuple[str, ...] = ()
        self._path: tuple[str, ...] = ()
        """The chain's entities of the question being written, when the caller gave them."""
        """Names (token sequences) of the hidden entities of the question being written."""
        self.nouns = {"typed": 0, "safe": 0}
        """Described entities of the last question headed by their type noun vs by a safe word."""

    def _says_hidden(self, words: str) -> bool:
        """Whether a role or type noun would say a hidden name ("the cinematographer of ..." when
        the answer is the profession Cinematographer)."""
        return any(name in sequence for sequence in token_sequences(words) for name in self._avoid)

    # ---- nouns ----------------------------------------------------------------------------------

    def set_noun(self, nodes, step: Step | None = None) -> str | None:
        """The noun shared by the entities of a described set (node numbers), else the noun of the side
        of the relation `step` reached them over ("a place", where a sample of cities and regions
        agrees on none; where the relation declares no noun, the one its holders share), else None
        ("something")."""
        ids = [self.kg.node_ids[node] for node in nodes[:SAMPLE].tolist()]
        noun = self.types.common_noun(ids) if ids else None
        if noun is None and step is not None:
            way = INVERSE if step.direction == FORWARD else FORWARD
            side = self.types.side_noun(step.relation, way) or self.types.held_noun(step.relation, way)
            noun = BROADER.get(side, side) or None
        return noun

    def _head(self, noun: str | None, definite: bool) -> tuple[str, str]:
        """(noun phrase head, relative pronoun) for a described entity."""
        self.nouns["typed" if noun else "safe"] += 1
        if noun is None:
            return "something", "that"
        pronoun = "who" if self.types.is_person(noun) else "that"
        return grammar.with_article(noun, definite), pronoun

    # ---- steps ----------------------------------------------------------------------------------

    def _verb(
        self, step: Step | Fact, obj: str, obj_named: bool, obj_role: bool = False, obj_head: str = ""
    ) -> tuple[str, bool]:
        """(clause about the reached entity, passive?) for stepping from `obj` (a name, a role
        phrase such as "the genre of Saw", or a description headed by `obj_head`, "a country") over `step`."""
        relation = self.kg.relations[step.relation]
        phrase = relation.inverse if step.direction == FORWARD else relation.forward
        if not phrase:  # no inverse in English: "a city that Berlin is located in"
            return f"that {obj} {relation.forward}", False
        passive = grammar.reduced_relative(phrase) is not None
        if obj_named:
            stripped = grammar.without_object_noun(phrase)
            # "produced Heat", not "produced the film Heat" when the answer is Film; "is in Russian
            # Language", not "is in the language Russian Language"
            if self._says_hidden(phrase) or (stripped != phrase and _ends_with(obj, phrase[len(stripped) + 5 :])):
                phrase = stripped
            return f"{phrase} {obj}", passive
        stripped = grammar.without_object_noun(phrase)
        if stripped == phrase:
            return f"{phrase} {obj}", passive
        noun = phrase[len(stripped) + len(" the ") :]
        if self._says_hidden(noun):  # "produced something that ...", not "produced a film" when the answer is Film
            return f"{stripped} {obj}", passive
        if obj_head and obj.startswith(f"{obj_head} ") and not obj_head.endswith(f" {noun}"):
            # the relation's noun says what the entity is here: "belongs to a genre that ..." for
            # "something that ...", "has had a capital located in Africa", not "has had a country
            # located in Africa" (a set noun from a sample)
            rest = obj[len(obj_head) :]
            naming = re.match(r" (?:that|who) is ((?:the|a|an) .*)", rest)
            if naming and noun.split()[-1] in naming.group(1).split()[1:4]:  # "contains the country of citizenship
                return f"{stripped} {naming.group(1)}", passive  # of X", not "a country that is the country of ..."
            return f"{stripped} {grammar.with_article(noun, obj_head.startswith('the '))}{rest}", passive
        if stripped in LIGHT_VERBS:  # the noun is the relation: "has this place as its county seat", not "has it"
            return f"{stripped} {obj} as its {noun}", passive
        if (
            not obj_role or noun.split()[-1] in obj.split()[:4]
        ):  # "is located in a place that ...", "belongs to a genre of Saw"
            return f"{stripped} {obj}", passive
        return f"{phrase} that is {obj}", passive  # a role: "belongs to the genre that is the subject of X"

    def _role(self, step: Step) -> str:
        """The role noun with its preposition ("genre of", "risk factor for"), or ""."""
        relation = self.kg.relations[step.relation]
        role = relation.tail_role if step.direction == FORWARD else relation.head_role
        if role and self._says_hidden(role):
            return ""
        if not role or role.split()[-1] in grammar.PREPOSITIONS:
            return role
        return f"{role} of"

    def fact_clause(self, fact: Fact) -> str:
        """What the described entity does with respect to the fact's named anchor."""
        text, _ = self._verb(fact, shown_name(self.types, fact.anchor), True)
        return text

    def _describe(
        self,
        step: Step,
        previous: str,
        named: bool,
        previous_role: bool,
        previous_head: str,
        reached,
        rng: random.Random,
    ) -> tuple[str, bool, str]:
        """(noun phrase for the entities `reached` (node numbers) by `step` from `previous`, whether
        it is a role phrase, its head ("a country") when it is a description)."""
        definite = len(reached) == 1
        role = self._role(step)
        if role and not step.where:
            if (
                named
                and definite
                and role.endswith(" of")
                and len(previous.split()) <= POSSESSIVE_MAX_WORDS
                and not previous.endswith(")")  # "Legend (1985)'s composer" reads badly
                and rng.random() < 0.5
            ):
                return f"{grammar.possessive(previous)} {role[:-3]}", True, ""
            return f"{grammar.with_article(role, definite)} {previous}", True, ""
        text, head = self._noun_phrase(step, previous, named, previous_role, previous_head, definite, reached)
        return text, False, head

    def _noun_phrase(
        self, step: Step, previous: str, named: bool, previous_role: bool, previous_head: str, definite: bool, reached
    ) -> tuple[str, str]:
        """(description, its head)."""
        noun = self.set_noun(reached, step)
        noun = None if noun and self._says_hidden(noun) else noun
        head, pronoun = self._head(noun, definite)
        chain, passive = self._verb(step, previous, named, previous_role, previous_head)
        clauses = [self.fact_clause(fact) for fact in step.where]
        if chain.startswith("that "):  # object-gap relative ("that Berlin is located in")
            return f"{head} {chain}" + "".join(f" and {clause}" for clause in clauses), head
        parts = grammar.merge_shared([*clauses, chain])
        # "the founding place of X", not "the place that is the founding place of X"; "a genre of both X and Y"
        if (
            len(parts) == 1
            and noun
            and parts[0].startswith(("is the ", "is a ", "is an "))
            and noun.split()[-1] in parts[0].partition(" of ")[0].split()
        ):
            return grammar.with_article(parts[0].split(" ", 2)[2], definite), ""
        if not clauses:
            reduced = grammar.reduced_relative(chain) if passive else grammar.reduced_active(chain)
            if reduced:
                return f"{head} {reduced}", head
        # "the place of origin of X that contains Rome", not "the place that is the place of origin of X and ..."
        naming = next(
            (
                part
                for part in parts
                if noun and part.startswith(("is the ", "is a ", "is an ")) and noun.split()[-1] in part.split()[2:5]
            ),
            None,
        )
        if naming is not None and len(parts) > 1:
            rest = [part for part in parts if part is not naming]
            return f"{grammar.with_article(naming.split(' ', 2)[2], definite)} {pronoun} " + " and ".join(rest), ""
        return f"{head} {pronoun} " + " and ".join(parts), head

    def predicate(
        self, constraint: Constraint, rng: random.Random | None = None, frontiers: list | None = None
    ) -> Predicate:
        """The constraint as a predicate about the entity it arrives at (`frontiers`: the
        constraint's `kg.frontiers`, when the caller has them already)."""
        rng = rng or random.Random(0)
        frontiers = frontiers or self.kg.frontiers(constraint.anchor, constraint.steps)
        subject, named, is_role, head = shown_name(self.types, constraint.anchor), True, False, ""
        for index, step in enumerate(constraint.steps[:-1]):
            (subject, is_role, head), named = (
                self._describe(step, subject, named, is_role, head, frontiers[index + 1], rng),
                False,
            )
        last = constraint.steps[-1]
        facts = [self.fact_clause(fact) for fact in last.where]
        role, definite = self._role(last), len(frontiers[-1]) == 1
        relation = self.kg.relations[last.relation]
        place = None
        if last.direction == FORWARD and not facts:
            parts = grammar.in_which(relation.forward)
            place = (*parts, subject) if parts else None
        if role:
            text = f"is {grammar.with_article(role, definite)} {subject}"
        else:
            text, _ = self._verb(last, subject, named, is_role, head)
            if text.startswith("that "):
                text = f"is something {text}"
        if facts:
            text = " and ".join([text, *facts])
            role = ""
        return Predicate(text=text, role=role, of=subject, named=named, definite=definite, place=place)

    def clause(self, constraint: Constraint) -> str:
        """The constraint as a clause about the answer (a cue's text)."""
        return self.predicate(constraint).text

    # ---- questions ------------------------------------------------------------------------------

    def question(
        self,
        constraints: list[Constraint] | tuple[Constraint, ...],
        hidden: Sequence[str] = (),
        path: Sequence[str] = (),
    ) -> str:
        """The question; `hidden` are the names of its hidden entities (answer and intermediates),
        which no role or type noun may say; `path`, the chain's entities from its anchor, lets a long
        chain call each entity by its own noun, not the noun the set its step reaches shares ("A school
        is located in this place", not "Another place ..."; "A country was involved in ...", not
        "Something ..."): true of it, and only narrower, so the answer stays unique."""
        self._avoid = sequences_of(hidden)
        self._path = tuple(path)
        self.nouns = {"typed": 0, "safe": 0}
        rng = random.Random(content_hash([constraint.model_dump(mode="json") for constraint in constraints]))
        frontiers = [self.kg.frontiers(constraint.anchor, constraint.steps) for constraint in constraints]
        predicates = [self.predicate(constraint, rng, reached) for constraint, reached in zip(constraints, frontiers)]
        answers = frontiers[0][-1]
        for reached in frontiers[1:]:
            answers = np.intersect1d(answers, reached[-1], assume_unique=True)
        noun = self.types.noun(self.kg.node_ids[int(answers[0])]) if len(answers) == 1 else None
        if noun is None:  # the answer's own relations disagree: the noun of the side its chain reaches
            last = constraints[0].steps[-1]
            side = self.types.side_noun(last.relation, INVERSE if last.direction == FORWARD else FORWARD)
            noun = BROADER.get(side, side) or None
        self.nouns["typed" if noun else "safe"] += 1
        noun = None if noun and self._says_hidden(noun) else noun
        try:
            if len(constraints[0].steps) < SENTENCES_FROM:
                composed = self._compose(predicates, noun, rng)
                if not stacked_clauses(composed):
                    return _tidy(composed)
            return _tidy(self._sentences(constraints, frontiers[0], predicates[1:], noun, rng))
        finally:
            self._avoid, self._path = (), ()

    def _sentences(
        self, constraints, frontiers: list, cues: list[Predicate], noun: str | None, rng: random.Random
    ) -> str:
        """A long chain as sentences, one per hop: each introduces the entity the hop reaches (with its
        own facts), the next refers back to it; the answer's cues follow, then the question."""
        chain = constraints[0]
        sentences, previous, named = [], shown_name(self.types, chain.anchor), True
        for index, step in enumerate(chain.steps):
            reached = frontiers[index + 1]
            last = index == len(chain.steps) - 1
            kind = noun if last else self._own_noun(index + 1) or self.set_noun(reached, step)
            kind = None if kind and self._says_hidden(kind) else kind
            self.nouns["typed" if kind else "safe"] += 1
            person = self.types.is_person(kind)
            if kind and previous == f"this {kind}":  # "Another place contains this place."
                intro = f"another {kind}"
            else:
                intro = grammar.with_article(kind, False) if kind else ("someone" if person else "something")
            clause, _ = self._verb(step, previous, named)
            facts = [self.fact_clause(fact) for fact in step.where]
            if clause.startswith("that "):  # no inverse phrase: "This city is located in a country."
                relation = self.kg.relations[step.relation]
                sentence = f"{_capital(previous)} {relation.forward} {intro}"
                if facts:
                    sentence += f", which {grammar.join_and(facts)}"
            elif clause.startswith(("is the ", "is a ", "is an ")) and _names_itself(clause, kind):
                # "This person died in a place", not "A place is the place of death of this person"
                sentence = self._from_previous(step, previous, intro)
                if sentence is None:
                    sentence = f"Take {clause[3:]}"
                    kind = kind or clause.split()[2]
                if facts:
                    sentence += f", which {grammar.join_and(facts)}"
            else:
                sentence = f"{_capital(intro)} {grammar.join_and([clause, *facts])}"
            sentences.append(sentence + ".")
            person = person or self.types.is_person(kind)
            previous, named = ("this person" if person else f"this {kind}" if kind else "this one"), False
        subject = "This person" if self.types.is_person(noun) else "It"
        for cue in cues:
            text = cue.text.replace("is ", "is also ", 1) if cue.text.startswith("is ") else f"also {cue.text}"
            sentences.append(f"{subject} {text}.")
        # the answer's type up front, then the clues one entity at a time
        if self.types.is_person(noun):
            opening = rng.choice(["Name the person these clues describe.", "Identify the person described here."])
        elif noun:
            opening = rng.choice([f"Name the {noun} these clues describe.", f"Identify the {noun} described here."])
        else:
            opening = "Name what these clues describe."
        return opening + " " + " ".join(sentences)

    def _own_noun(self, position: int) -> str | None:
        """The noun of the chain's entity at `position` (None without a path)."""
        return self.types.noun(self._path[position]) if position < len(self._path) else None

    def _from_previous(self, step: Step, previous: str, intro: str) -> str | None:
        """The step told from the entity before it: "This person died in a place", "This country has
        an official language"; None where the relation has no phrase from that side."""
        relation = self.kg.relations[step.relation]
        phrase = relation.forward if step.direction == FORWARD else relation.inverse
        if not phrase or phrase.endswith(" by"):  # "was directed by": the passive reads better the other way
            return None
        stripped = grammar.without_object_noun(phrase)
        if stripped != phrase:  # "has the official language" -> "has an official language"
            noun = phrase[len(stripped) + len(" the ") :]
            if self._says_hidden(noun):
                return None
            return f"{_capital(previous)} {stripped} {grammar.with_article(noun, False)}"
        return f"{_capital(previous)} {phrase} {intro}"

    def _compose(self, predicates: list[Predicate], noun: str | None, rng: random.Random) -> str:
        person = self.types.is_person(noun)
        options = []
        roles = sorted(
            (index for index, predicate in enumerate(predicates) if predicate.role),
            key=lambda index: (not predicates[index].named, len(predicates[index].of)),
        )
        if roles:  # "Which genre of Saw ...", "What is the capital of ...": the shortest "of" first
            first = predicates[roles[0]]
            rest = [predicate.text for index, predicate in enumerate(predicates) if index != roles[0]]
            rest = [text.replace("is ", "is also ", 1) if text.startswith("is ") else text for text in rest]
            if not rest:
                options += [f"What is the {first.role} {first.of}?", f"Name the {first.role} {first.of}."]
            else:
                options.append(f"Which {first.role} {first.of} {grammar.join_and(rest)}?")
                if len(first.of.split()) <= POSSESSIVE_MAX_WORDS:
                    options.append(f"Name the {first.role} {first.of} that {grammar.join_and(rest)}.")
        texts = grammar.merge_shared([predicate.text for predicate in predicates])
        # "Which genre is a genre of ...": a noun opening must not repeat the noun straight away
        clash = noun is not None and any(noun.split()[-1] in text.split()[:5] for text in texts)
        if person:
            options.append(f"Who {grammar.join_and(texts)}?")
        elif noun is None or clash:
            options.append(f"What {grammar.join_and(texts)}?")
        else:
            reduced = (
                (grammar.reduced_relative(texts[0]) or grammar.reduced_active(texts[0])) if len(texts) == 1 else None
            )
            options += [
                f"Which {noun} {grammar.join_and(texts)}?",
                f"What {noun} {grammar.join_and(texts)}?",
                f"Name the {noun} {reduced}." if reduced else f"Name the {noun} that {grammar.join_and(texts)}.",
            ]
        if len(predicates) == 1 and predicates[0].place and noun and not person:
            auxiliary, participle, subject = predicates[0].place
            if len(subject.split()) <= IN_WHICH_MAX_WORDS:
                options.append(f"In which {noun} {auxiliary} {subject} {participle}?")
        return rng.choice(options)


def _tidy(text: str) -> str:
    """One full stop where a name's own meets the sentence's ("Freddie Prinze, Jr.." -> "Jr.")."""
    return re.sub(r"(?<=[A-Za-z]\.)\.(?=\s|$)", "", text)


def _ends_with(name: str, noun: str) -> bool:
    """Whether `name` ends with the word(s) `noun` ("Russian Language" and "language")."""
    return name.lower().split()[-len(noun.split()) :] == noun.lower().split() if noun and name else False


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _names_itself(clause: str, kind: str | None) -> bool:
    """Whether "is the place of death of X" already says what the entity is (a place), or nothing does."""
    return kind is None or kind.split()[-1] in clause.split()[2:5]

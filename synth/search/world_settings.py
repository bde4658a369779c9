"""The `world` section of every recipe's config: which graph or corpus the run's agents search, with
which retriever and how many documents a search returns, under which agent contract. Declared once
here, so the three recipes word and validate it alike; each agent (panel, teacher, proposer, the
shortcut check) may name its own retriever or k, and takes these where it does not."""

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, Field

from synth.config import FrozenConfig, warn_moved
from synth.contract.contracts import ContractName
from synth.search.passages import PASSAGE_WORDS
from synth.search.world import RetrieverChoice, World
from synth.settings import Settings

WORLD_KEYS = ("kg", "corpus", "passage_words", "retriever", "retrieval_k", "contract")


class WorldSettings(FrozenConfig):
    kg: str | None = Field(
        default=None,
        description="Knowledge graph: the name of one imported with `synth kg import`, a snapshot folder or "
        ".duckdb file; default: the bundled FB15k-237. Its corpus is searched unless `corpus` names a file.",
    )
    corpus: str | None = Field(
        default=None,
        description='A Search-R1 JSONL corpus file ({"id", "contents"}) to search instead of the graph\'s corpus '
        "(selfplay, curate; multihop always searches its graph's).",
    )
    passage_words: int = Field(
        default=PASSAGE_WORDS,
        ge=0,
        description="Words per passage the `corpus` file's documents are cut into (Search-R1's 100); 0 keeps "
        "whole documents, as a remote retriever that indexes them has them.",
    )
    retriever: RetrieverChoice = Field(
        default="bm25",
        description="The world's search: bm25 (fast, cached), dense or hybrid (dense indexes take minutes to build "
        "on CPU), or the URL of a Search-R1-compatible /retrieve endpoint over the same corpus. An agent or "
        "check may name its own.",
    )
    retrieval_k: int = Field(
        default=3,
        ge=1,
        le=20,
        description="Documents one search returns to the agents (panel, teacher, proposer) that set no k of their own.",
    )
    contract: ContractName = Field(
        default="synth",
        description="Agent contract the agents run under: tools, how results read, how an answer is finished "
        "(see synth.contract).",
    )

    def open(self, settings: Settings, log: Callable[[str], None]) -> World:
        return World(
            settings,
            kg=self.kg,
            corpus_file=self.corpus,
            passage_words=self.passage_words,
            contract=self.contract,
            log=log,
        )


def move_world_keys(values: Any, section_fields: tuple[str, ...] = ()) -> Any:
    """A config mapping with the world keys of before (`kg`, `corpus`, `retriever`, ... at the top
    level) moved under `world`, one deprecation line each. `section_fields`: keys an older `world`
    section held that now live elsewhere (multihop's multiplicity model), moved to `multiplicity`."""
    if not isinstance(values, dict):
        return values
    values = dict(values)
    world = values.get("world")
    if isinstance(world, dict):
        world = dict(world)
        moved_out = {key: world.pop(key) for key in list(world) if key in section_fields}
        if moved_out:
            warn_moved("world." + ", world.".join(moved_out), "multiplicity.*")
            values["multiplicity"] = {**moved_out, **(values.get("multiplicity") or {})}
        values["world"] = world
    old = [key for key in WORLD_KEYS if key in values]
    if old:
        if isinstance(world, BaseModel):  # a section given as an object: the old keys go into a copy of it
            world = world.model_dump(exclude_unset=True)
        world = dict(world or {})
        for key in old:
            warn_moved(key, f"world.{key}")
            world.setdefault(key, values.pop(key))
        values["world"] = world
    return values

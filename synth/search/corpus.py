"""A document corpus derived from the knowledge graph, so every edge can be found in text.

Each entity gets passages: its description, then one sentence per outgoing edge
("{head} {forward} {tail}."), `FACTS_PER_PASSAGE` sentences per passage so hub entities do not
produce one enormous document. The passage that states an edge is the edge's evidence; ids
(`{entity_id}#{n}`) are stable for a given snapshot because facts are sorted before chunking.
`Corpus` gives the passages retrievers index, from a graph or from a Search-R1 JSONL file, by
position and by id, stored on disk once and memory-mapped (`synth.search.corpus_store`).
"""

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import overload

import pyarrow as pa

from synth.errors import ConfigError
from synth.kg.graph import FORWARD, KnowledgeGraph
from synth.kg.readers import numbered_lines
from synth.schemas import Document
from synth.search.build_once import build_once
from synth.search.corpus_store import PassageTable, build_in_memory, build_on_disk, read_meta
from synth.search.passages import PASSAGE_WORDS

STORE_FORMAT = 1
"""Bumped when the stored layout or the graph corpus' wording changes, so an older store is rebuilt, never misread."""

FACTS_PER_PASSAGE = 12


def fact_sentence(kg: KnowledgeGraph, head: str, relation: str, tail: str) -> str:
    return f"{kg.name(head)} {kg.relations[relation].forward} {kg.name(tail)}."


@dataclass
class KGCorpus:
    kg: KnowledgeGraph

    def _facts(self, entity_id: str) -> list[tuple[str, str]]:
        """Sorted (relation, tail) pairs of the entity's outgoing edges."""
        return sorted(
            (relation, tail)
            for relation, direction in self.kg.incident(entity_id)
            if direction == FORWARD
            for tail in self.kg.neighbors(entity_id, relation, FORWARD)
        )

    def evidence_id(self, head: str, relation: str, tail: str) -> str:
        """Id of the passage that states `head relation tail`."""
        position = self._facts(head).index((relation, tail))
        return f"{head}#{position // FACTS_PER_PASSAGE}"

    def entity_documents(self, entity_id: str) -> list[Document]:
        facts = self._facts(entity_id)
        entity = self.kg.entities.get(entity_id)
        description = entity.description if entity else ""
        title = self.kg.name(entity_id)
        documents = []
        chunks = [facts[start : start + FACTS_PER_PASSAGE] for start in range(0, len(facts), FACTS_PER_PASSAGE)] or [[]]
        for number, chunk in enumerate(chunks):
            sentences = [fact_sentence(self.kg, entity_id, relation, tail) for relation, tail in chunk]
            lead = [description] if description and number == 0 else []
            text = " ".join(lead + sentences)
            if text:
                documents.append(Document(id=f"{entity_id}#{number}", title=title, text=text, entity_id=entity_id))
        return documents

    def documents(self) -> Iterator[Document]:
        for entity_id in self.kg.node_ids:
            yield from self.entity_documents(entity_id)

    def document(self, doc_id: str) -> Document | None:
        entity_id, _, _ = doc_id.rpartition("#")
        for document in self.entity_documents(entity_id):
            if document.id == doc_id:
                return document
        return None

    @cached_property
    def size(self) -> int:
        return sum(1 for _ in self.documents())


class Corpus:
    """Passages in a fixed order, by position and by id: what retrievers index, `search` shows and `open` reads.

    Built from a knowledge graph (one passage per entity and chunk of its facts) or read from a
    Search-R1 JSONL file (`{"id", "contents"}` with `contents` = `"Title"\\ntext`), whose documents
    are cut into passages of `passage_words` words (`synth.search.passages`). Given a store folder,
    the passages are written once to an Arrow file there and memory-mapped on every later load
    (`synth.search.corpus_store`); without one, the same table is built in memory.
    `documents` is the sequence of passages (records made as they are read).
    """

    def __init__(self, documents: Iterable[Document], name: str, passage_words: int = 0):
        table, built = build_in_memory(documents, name, passage_words)
        self._attach(table, name, built.fingerprint)

    def _attach(self, table: PassageTable, name: str, fingerprint: str) -> None:
        self.table = table
        self.name = name
        self.fingerprint = fingerprint
        """Hash of every passage's id, title and text in order: the key of the indexes built on this corpus."""
        self.documents = PassageSequence(table)

    @classmethod
    def _stored(
        cls,
        folder: Path,
        documents: Callable[[], Iterable[Document]],
        name: str,
        passage_words: int,
        source: dict,
        log: Callable[[str], None],
    ) -> "Corpus":
        """The corpus in `folder`, built there first from `documents()` if no earlier run did (or
        as a shared cache holds it, see `build_once`)."""
        folder = build_once(
            folder,
            lambda staging: build_on_disk(documents(), staging, name, passage_words, source),
            log,
            f"corpus store ({name})",
        )
        try:
            table, meta = PassageTable.open(folder), read_meta(folder)
        except (OSError, ValueError, KeyError, pa.ArrowException) as error:
            raise ConfigError(
                f"the corpus store {folder} is damaged ({type(error).__name__}: {error}); "
                "delete that folder and it is rebuilt on the next run"
            ) from None
        corpus = cls.__new__(cls)
        corpus._attach(table, name, meta["fingerprint"])
        return corpus

    @classmethod
    def from_kg(cls, kg: KnowledgeGraph, store: Path | None = None, log: Callable[[str], None] = print) -> "Corpus":
        """The graph's corpus; with `store` (a folder of corpus stores), written there once per snapshot and mapped."""
        name = f"kg:{kg.snapshot}"
        if store is None:
            return cls(KGCorpus(kg).documents(), name=name)
        key = hashlib.sha256(json.dumps([kg.snapshot, FACTS_PER_PASSAGE, STORE_FORMAT]).encode()).hexdigest()[:16]
        return cls._stored(
            store / f"kg-{_slug(kg.snapshot)}-{key}",
            lambda: KGCorpus(kg).documents(),
            name,
            0,
            {"kg": kg.snapshot},
            log,
        )

    @classmethod
    def from_jsonl(
        cls,
        path: Path,
        store: Path | None = None,
        passage_words: int = PASSAGE_WORDS,
        log: Callable[[str], None] = print,
    ) -> "Corpus":
        """A Search-R1 corpus file, its documents cut into passages of `passage_words` words (0: whole
        documents); a bad line is an error naming its line number. With `store`, the passages are
        written there once per file version (path, size, modification time) and mapped after that."""
        name = f"jsonl:{path.name}"
        if store is None:
            return cls(_jsonl_documents(path), name=name, passage_words=passage_words)
        stat = path.stat()
        source = {"path": str(path.resolve()), "bytes": stat.st_size, "modified_ns": stat.st_mtime_ns}
        key = hashlib.sha256(json.dumps([source, passage_words, STORE_FORMAT]).encode()).hexdigest()[:16]
        return cls._stored(
            store / f"jsonl-{_slug(path.stem)}-{key}", lambda: _jsonl_documents(path), name, passage_words, source, log
        )

    def __len__(self) -> int:
        return self.table.rows

    def get(self, passage_id: str) -> Document | None:
        """The passage with this id (an evidence id, a search result's id), or None."""
        position = self.table.position(passage_id)
        return self.table.passage(position) if position is not None else None

    def position(self, passage_id: str) -> int | None:
        return self.table.position(passage_id)

    def document(self, doc_id: str) -> Document | None:
        """What `open` shows: the whole document a passage id or a document id names, or None."""
        return self.table.document(doc_id)

    def search_texts(self, separator: str = " ", start: int = 0, end: int | None = None) -> Iterator[list[str]]:
        """`title + separator + text` of passages `start:end`, a batch at a time: what indexes read."""
        for titles, texts in self.table.columns(("title", "text"), start, end):
            yield [f"{title}{separator}{text}" for title, text in zip(titles, texts)]

    def write_jsonl(self, path: Path) -> int:
        """Write the corpus in Search-R1's format (for its retrieval server or indexers)."""
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.partial")  # writers of one path never share a temp file
        with open(partial, "w", encoding="utf-8") as handle:
            for ids, titles, texts in self.table.columns(("id", "title", "text")):
                for doc_id, title, text in zip(ids, titles, texts):
                    handle.write(
                        json.dumps({"id": doc_id, "contents": contents_of(title, text)}, ensure_ascii=False) + "\n"
                    )
        partial.replace(path)
        return len(self)


class PassageSequence(Sequence[Document]):
    """A corpus' passages as a read-only sequence; each record is made when it is read."""

    def __init__(self, table: PassageTable):
        self.table = table

    def __len__(self) -> int:
        return self.table.rows

    @overload
    def __getitem__(self, index: int) -> Document: ...

    @overload
    def __getitem__(self, index: slice) -> list[Document]: ...

    def __getitem__(self, index: int | slice) -> Document | list[Document]:
        if isinstance(index, slice):
            return [self.table.passage(position) for position in range(*index.indices(self.table.rows))]
        return self.table.passage(index + self.table.rows if index < 0 else index)

    def __iter__(self) -> Iterator[Document]:
        return self.table.passages()


def _jsonl_documents(path: Path) -> Iterator[Document]:
    empty = True
    for number, line in numbered_lines(path):
        try:
            row = json.loads(line)
            title, text = split_contents(str(row["contents"]))
            document = Document(id=str(row["id"]), title=title or str(row["id"]), text=text)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
            raise ConfigError(
                f"{path}:{number}: not a Search-R1 corpus line ({type(error).__name__}); "
                'expected {"id": ..., "contents": "\\"Title\\"\\ntext"}'
            ) from None
        empty = False
        yield document
    if empty:
        raise ConfigError(f"{path}: the corpus has no documents")


def _slug(text: str) -> str:
    return "".join(character if character.isalnum() or character in "-_." else "_" for character in text)[:60]


def search_r1_contents(document: Document) -> str:
    return contents_of(document.title, document.text)


def contents_of(title: str, text: str) -> str:
    """Search-R1's `contents`: the title in quotes on the first line, then the text."""
    return f'"{title}"\n{text}'


def split_contents(contents: str) -> tuple[str, str]:
    """Search-R1 `contents` -> (title, text): the first line, unquoted, is the title."""
    first, _, rest = contents.partition("\n")
    return first.strip().strip('"'), rest.strip()

"""Passages stored columnar: an Arrow IPC file read through a memory map, ids found through a hash index.

A Wikipedia-size world (21M passages) held as Python objects needs about 24 GiB; mapped, a
passage costs nothing until it is read, and the page cache holds the only copy. Rows are written
in record batches of `BATCH_ROWS`, so a position finds its batch by division and a build streams
in bounded memory. Ids are found by binary search over sorted 64-bit hashes (two `.npy` arrays,
16 bytes a key, mapped as well) and then compared with the stored id, so a hash collision costs
one more comparison, never a wrong passage. The same table serves a corpus built in memory (a
test's few documents, the bundled graph's corpus): one code path for both.
"""

import hashlib
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from synth.errors import ConfigError
from synth.schemas import Document
from synth.search.passages import split_document

BATCH_ROWS = 4096
SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
        ("entity_id", pa.string()),
        ("document_id", pa.string()),
        ("part", pa.int32()),
    ]
)
DOCUMENT_KEY = 1 << 62
"""Set on an index entry that names a document (the row of its first passage) rather than a passage."""


def key_hash(key: str) -> int:
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "little")


@dataclass(frozen=True)
class Built:
    """What a build learned besides the rows: the index arrays and the corpus' fingerprint."""

    key_hashes: np.ndarray
    key_rows: np.ndarray
    fingerprint: str
    passages: int
    documents: int


def write_passages(documents: Iterable[Document], sink, passage_words: int) -> Built:
    """Cut `documents` into passages and write them to `sink` (an Arrow IPC file), batch by batch."""
    writer = pa.ipc.new_file(sink, SCHEMA)
    columns: dict[str, list] = {name: [] for name in SCHEMA.names}
    hashes: list[np.ndarray] = []
    rows: list[np.ndarray] = []
    pending_hashes: list[int] = []
    pending_rows: list[int] = []
    digest = hashlib.sha256()
    passages = documents_seen = 0

    def flush() -> None:
        if columns["id"]:
            writer.write_batch(
                pa.record_batch(
                    [pa.array(columns[name], type=SCHEMA.field(name).type) for name in SCHEMA.names], schema=SCHEMA
                )
            )
            for values in columns.values():
                values.clear()
        hashes.append(np.array(pending_hashes, dtype=np.uint64))
        rows.append(np.array(pending_rows, dtype=np.int64))
        pending_hashes.clear()
        pending_rows.clear()

    for document in documents:
        documents_seen += 1
        for passage, part in split_document(document, passage_words):
            for name, value in (
                ("id", passage.id),
                ("title", passage.title),
                ("text", passage.text),
                ("entity_id", passage.entity_id),
                ("document_id", passage.document_id),
                ("part", part),
            ):
                columns[name].append(value)
            # the fingerprint of the in-memory corpus before it moved to disk, so cached indexes stay valid
            digest.update(f"{passage.id}\x1f{passage.title}\x1f{passage.text}\x1e".encode())
            pending_hashes.append(key_hash(passage.id))
            pending_rows.append(passages)
            if passage.document_id is not None and part == 0:
                pending_hashes.append(key_hash(passage.document_id))
                pending_rows.append(passages | DOCUMENT_KEY)
            passages += 1
            if len(columns["id"]) == BATCH_ROWS:
                flush()
    flush()
    writer.close()
    key_hashes, key_rows = np.concatenate(hashes), np.concatenate(rows)
    order = np.argsort(key_hashes, kind="stable")
    return Built(key_hashes[order], key_rows[order], digest.hexdigest()[:16], passages, documents_seen)


class PassageTable:
    """Passages by position and by id, over record batches (mapped from a file, or in memory)."""

    def __init__(
        self, batches: list[pa.RecordBatch], key_hashes: np.ndarray, key_rows: np.ndarray, folder: Path | None = None
    ):
        self.batches = batches
        self.key_hashes, self.key_rows = key_hashes, key_rows
        self.folder = folder
        self.rows = sum(batch.num_rows for batch in batches)

    @classmethod
    def from_ipc(
        cls, source, key_hashes: np.ndarray, key_rows: np.ndarray, folder: Path | None = None
    ) -> "PassageTable":
        reader = pa.ipc.open_file(source)
        return cls(
            [reader.get_batch(index) for index in range(reader.num_record_batches)], key_hashes, key_rows, folder
        )

    @classmethod
    def open(cls, folder: Path) -> "PassageTable":
        """The table a build left in `folder`, memory-mapped."""
        return cls.from_ipc(
            pa.memory_map(str(folder / "passages.arrow")),
            np.load(folder / "key_hashes.npy", mmap_mode="r"),
            np.load(folder / "key_rows.npy", mmap_mode="r"),
            folder,
        )

    def __reduce__(self):  # a mapped table travels as its folder (Dask workers map it again), not as its bytes
        if self.folder is not None:
            return PassageTable.open, (self.folder,)
        return PassageTable, (self.batches, np.asarray(self.key_hashes), np.asarray(self.key_rows))

    def _locate(self, position: int) -> tuple[pa.RecordBatch, int]:
        if not 0 <= position < self.rows:
            raise IndexError(f"passage position {position} outside 0-{self.rows - 1}")
        return self.batches[position // BATCH_ROWS], position % BATCH_ROWS

    def _cell(self, position: int, column: str):
        batch, offset = self._locate(position)
        return batch.column(column)[offset].as_py()

    def passage(self, position: int) -> Document:
        batch, offset = self._locate(position)
        id_, title, text, entity_id, document_id = (batch.column(index)[offset].as_py() for index in range(5))
        return Document(id=id_, title=title, text=text, entity_id=entity_id, document_id=document_id)

    def passages(self) -> Iterator[Document]:
        for batch in self.batches:
            for row in batch.to_pylist():
                row.pop("part")
                yield Document(**row)

    def columns(self, names: tuple[str, ...], start: int = 0, end: int | None = None) -> Iterator[tuple[list, ...]]:
        """Lists of the named columns' values for rows `start:end`, a record batch at a time."""
        end = self.rows if end is None else min(end, self.rows)
        while start < end:
            batch = self.batches[start // BATCH_ROWS]
            offset = start % BATCH_ROWS
            piece = batch.slice(offset, min(end - start, batch.num_rows - offset))
            yield tuple(piece.column(name).to_pylist() for name in names)
            start += piece.num_rows

    def _entries(self, key: str) -> Iterator[int]:
        hashed = np.uint64(key_hash(key))
        low = int(np.searchsorted(self.key_hashes, hashed, side="left"))
        high = int(np.searchsorted(self.key_hashes, hashed, side="right"))
        for entry in range(low, high):
            yield int(self.key_rows[entry])

    def position(self, passage_id: str) -> int | None:
        """The position of the passage with this id, or None."""
        for entry in self._entries(passage_id):
            if not entry & DOCUMENT_KEY and self._cell(entry, "id") == passage_id:
                return entry
        return None

    def document(self, key: str) -> Document | None:
        """The whole document a passage id or a document id names: the passage itself when it is a whole
        document, else its document's passages joined in order under the document's id."""
        for entry in self._entries(key):
            row = entry & ~DOCUMENT_KEY
            if entry & DOCUMENT_KEY and self._cell(row, "document_id") == key:
                return self._joined(row)
            if not entry & DOCUMENT_KEY and self._cell(row, "id") == key:
                if self._cell(row, "document_id") is None:
                    return self.passage(row)
                return self._joined(row - self._cell(row, "part"))
        return None

    def _joined(self, first: int) -> Document:
        head = self.passage(first)
        texts, position = [head.text], first + 1
        while position < self.rows and self._cell(position, "document_id") == head.document_id:
            texts.append(self._cell(position, "text"))
            position += 1
        return Document(
            id=head.document_id or head.id, title=head.title, text=" ".join(texts), entity_id=head.entity_id
        )

    def check_unique(self, name: str) -> None:
        """A ConfigError naming the first id that two passages (or documents) share."""
        same = np.flatnonzero(self.key_hashes[1:] == self.key_hashes[:-1])
        for entry in same:
            keys = [self._key(int(self.key_rows[index])) for index in (entry, entry + 1)]
            if keys[0] == keys[1]:
                raise ConfigError(f"corpus {name}: document id {keys[0]!r} occurs more than once; ids must be unique")

    def _key(self, entry: int) -> str:
        return self._cell(entry & ~DOCUMENT_KEY, "document_id") if entry & DOCUMENT_KEY else self._cell(entry, "id")


def build_in_memory(documents: Iterable[Document], name: str, passage_words: int) -> tuple[PassageTable, Built]:
    sink = pa.BufferOutputStream()
    built = write_passages(documents, sink, passage_words)
    table = PassageTable.from_ipc(pa.BufferReader(sink.getvalue()), built.key_hashes, built.key_rows)
    table.check_unique(name)
    return table, built


def build_on_disk(documents: Iterable[Document], folder: Path, name: str, passage_words: int, source: dict) -> None:
    """Write the corpus into `folder` (a staging folder its caller renames into place)."""
    with pa.OSFile(str(folder / "passages.arrow"), "wb") as sink:
        built = write_passages(documents, sink, passage_words)
    np.save(folder / "key_hashes.npy", built.key_hashes)
    np.save(folder / "key_rows.npy", built.key_rows)
    PassageTable.open(folder).check_unique(name)
    meta = {
        "name": name,
        "fingerprint": built.fingerprint,
        "passages": built.passages,
        "documents": built.documents,
        "passage_words": passage_words,
        "source": source,
    }
    (folder / "corpus.json").write_text(json.dumps(meta, indent=1))


def read_meta(folder: Path) -> dict:
    return json.loads((folder / "corpus.json").read_text())

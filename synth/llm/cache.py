"""Content-addressed response cache: a rerun after a crash re-spends nothing already answered.

SQLite in WAL mode, because several worker processes write at once (DuckDB allows one writer
per file); each write is its own short transaction, so an answer is durable the moment it is
stored and a kill loses at most the calls still in flight.
"""

import sqlite3
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from synth.hashing import content_hash
from synth.llm.types import ChatRequest, ChatResponse

_SCHEMA = """
create table if not exists responses (
    key text primary key,
    model text not null,
    stage text not null,
    response text not null,
    created_at real not null
)
"""


def cache_key(request: ChatRequest, model_id: str) -> str:
    return content_hash(request.cache_payload(model_id), length=64)


class ResponseCache:
    """Maps request content (model identity, messages, tools, sampling incl. seed, schema) to a response."""

    def __init__(self, path: Path):
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connection() as connection:
            connection.execute(_SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            connection.execute("pragma journal_mode = wal")
            connection.execute("pragma synchronous = normal")
            self._local.connection = connection
        return connection

    def get_many(self, keys: list[str]) -> dict[str, ChatResponse]:
        found: dict[str, ChatResponse] = {}
        connection = self._connection()
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            rows = connection.execute(
                f"select key, response from responses where key in ({','.join('?' * len(chunk))})", chunk
            ).fetchall()
            for key, response in rows:
                found[key] = ChatResponse.model_validate_json(response)
        return found

    def put_many(self, entries: Iterable[tuple[str, str, ChatResponse]]) -> None:
        """Store (key, stage, response) triples; the first answer for a key wins."""
        rows = [
            (key, response.model, stage, response.model_dump_json(), time.time()) for key, stage, response in entries
        ]
        if rows:
            self._connection().executemany("insert or ignore into responses values (?, ?, ?, ?, ?)", rows)

    def put(self, key: str, stage: str, response: ChatResponse) -> None:
        """Store one answer in its own transaction: durable (in the WAL) the moment it returns."""
        self.put_many([(key, stage, response)])

    def close(self) -> None:
        """Close this thread's connection (others close when their threads end)."""
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def __len__(self) -> int:
        return self._connection().execute("select count(*) from responses").fetchone()[0]

    def stats_by_stage(self) -> dict[str, int]:
        return dict(self._connection().execute("select stage, count(*) from responses group by stage").fetchall())

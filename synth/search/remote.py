"""A retriever someone else runs: any Search-R1-compatible `POST /retrieve` endpoint.

Search-R1 users keep their e5 + FAISS index on a GPU box behind its retrieval server; synth's own
`synth search serve` speaks the same protocol. The server ranks; synth keeps the corpus itself
(the same JSONL the server indexes, or the graph's corpus) to render results and to `open`
documents by id, so a remote world and a local one render identically.

Model calls' rules apply: concurrent agents' searches reach this class already batched
(`synth.search.batcher`), so one POST carries many queries; connection failures, 429 and 5xx
answers are retried with jittered backoff; answers are cached on disk by (endpoint, corpus,
query, k), so a resumed run never asks twice.
"""

import json
import sqlite3
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from synth.errors import ConfigError
from synth.hashing import content_hash
from synth.llm.concurrency import backoff_delay
from synth.search.corpus import Corpus
from synth.search.retrieval import Hit

RETRYABLE_STATUS = {408, 429, 500, 502, 503, 504}


class RetrieverUnavailable(RuntimeError):
    """The endpoint did not answer after every retry."""


class RemoteRetriever:
    """`search` through a `/retrieve` endpoint, ranked positions in the local `corpus`."""

    def __init__(
        self,
        url: str,
        corpus: Corpus,
        cache_path: Path | None = None,
        timeout_s: float = 60.0,
        attempts: int = 6,
        max_queries_per_call: int = 256,
        log: Callable[[str], None] = print,
    ):
        self.url = url if url.rstrip("/").endswith("/retrieve") else url.rstrip("/") + "/retrieve"
        self.corpus = corpus
        self.timeout_s, self.attempts, self.max_queries_per_call = timeout_s, attempts, max_queries_per_call
        self.log = log
        self.calls = 0
        self.cache = _HitCache(cache_path) if cache_path is not None else None

    @property
    def description(self) -> dict:
        """What the version's lineage records: the endpoint, and what its /health says it serves."""
        health_url = self.url.rsplit("/", 1)[0] + "/health"
        try:
            with urllib.request.urlopen(health_url, timeout=min(self.timeout_s, 10)) as response:
                health = json.loads(response.read())
        except (OSError, ValueError):
            health = None  # Search-R1's own server has no /health
        return {
            "endpoint": self.url,
            "server": health,
            "corpus": self.corpus.name,
            "corpus_fingerprint": self.corpus.fingerprint,
        }

    def search(self, queries: list[str], k: int) -> list[list[Hit]]:
        keys = [
            content_hash({"url": self.url, "corpus": self.corpus.fingerprint, "query": query, "k": k}, length=32)
            for query in queries
        ]
        found = self.cache.get_many(keys) if self.cache else {}
        missing = [index for index, key in enumerate(keys) if key not in found]
        for start in range(0, len(missing), self.max_queries_per_call):
            chunk = missing[start : start + self.max_queries_per_call]
            rows = self._retrieve([queries[index] for index in chunk], k)
            answered = {keys[index]: row for index, row in zip(chunk, rows)}
            if self.cache:
                self.cache.put_many(answered)
            found.update(answered)
        return [[Hit(self._position(doc_id), score) for doc_id, score in found[key]] for key in keys]

    def _position(self, doc_id: str) -> int:
        position = self.corpus.position(doc_id)
        if position is None:
            raise ConfigError(
                f"the retriever at {self.url} returned document {doc_id!r}, which corpus {self.corpus.name} "
                "does not have; give synth the corpus that server indexes (its JSONL, --param corpus=PATH; "
                "--param passage_words=0 if the server indexes whole documents)"
            )
        return position

    def _retrieve(self, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
        body = json.dumps({"queries": queries, "topk": k, "return_scores": True}).encode()
        for attempt in range(1, self.attempts + 1):
            request = urllib.request.Request(self.url, data=body, headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    payload = json.loads(response.read())
                self.calls += 1
                return self._parse(payload, len(queries))
            except urllib.error.HTTPError as error:
                detail = error.read()[:300].decode(errors="replace")
                if error.code not in RETRYABLE_STATUS:
                    raise ConfigError(
                        f"the retriever at {self.url} refused the request (HTTP {error.code}: {detail}); "
                        "is it a Search-R1-compatible /retrieve endpoint?"
                    ) from None
                reason = f"HTTP {error.code}"
            except (OSError, TimeoutError) as error:  # refused, reset, timed out
                reason = type(error).__name__ if not str(error) else str(error)
            except ValueError:
                raise ConfigError(
                    f"the retriever at {self.url} answered with something other than JSON; "
                    "is it a Search-R1-compatible /retrieve endpoint?"
                ) from None
            if attempt < self.attempts:
                delay = backoff_delay(attempt, 0.5, 10.0)
                self.log(f"retriever {self.url}: {reason}; retrying in {delay:.1f} s ({attempt}/{self.attempts - 1})")
                time.sleep(delay)
        raise RetrieverUnavailable(
            f"the retriever at {self.url} did not answer after {self.attempts} attempts ({reason}); "
            "start it (synth search serve, or Search-R1's retrieval_server.py) or fix the URL"
        )

    def _parse(self, payload: object, expected: int) -> list[list[tuple[str, float]]]:
        """Search-R1's shape: {"result": [[{"document": {"id", ...}, "score": s} | document, ...], ...]}."""
        rows = payload.get("result") if isinstance(payload, dict) else None
        if not isinstance(rows, list) or len(rows) != expected:
            raise ConfigError(
                f"the retriever at {self.url} did not answer with one result list per query "
                '({"result": [[...], ...]}); is it a Search-R1-compatible /retrieve endpoint?'
            )
        parsed = []
        for row in rows:
            hits = []
            for rank, entry in enumerate(row):
                document = entry.get("document", entry) if isinstance(entry, dict) else None
                if not isinstance(document, dict) or "id" not in document:
                    raise ConfigError(
                        f"the retriever at {self.url} returned a document without an `id`; synth needs ids "
                        "to match results to its corpus (Search-R1's server returns the corpus rows, ids included)"
                    )
                score = entry.get("score") if "document" in entry else None
                hits.append((str(document["id"]), float(score) if score is not None else -float(rank)))
            parsed.append(hits)
        return parsed


class _HitCache:
    """(query key) -> [(doc id, score)], in SQLite: durable per call, shared by worker processes."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._local = threading.local()
        self._connection().execute("create table if not exists hits (key text primary key, hits text not null)")

    def _connection(self) -> sqlite3.Connection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = sqlite3.connect(self.path, timeout=60, isolation_level=None)
            connection.execute("pragma journal_mode = wal")
            self._local.connection = connection
        return connection

    def __getstate__(self) -> dict:  # a connection does not travel to another process (Dask)
        return {"path": self.path}

    def __setstate__(self, state: dict) -> None:
        self.path, self._local = state["path"], threading.local()

    def get_many(self, keys: list[str]) -> dict[str, list[tuple[str, float]]]:
        found = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            for key, hits in self._connection().execute(
                f"select key, hits from hits where key in ({','.join('?' * len(chunk))})", chunk
            ):
                found[key] = [tuple(hit) for hit in json.loads(hits)]
        return found

    def put_many(self, rows: dict[str, list[tuple[str, float]]]) -> None:
        self._connection().executemany(
            "insert or replace into hits values (?, ?)", [(key, json.dumps(hits)) for key, hits in rows.items()]
        )

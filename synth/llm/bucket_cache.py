"""The response cache shared through a bucket data root: an answer one machine paid for is reused by
every run on every machine that sends the same request.

The rule: a request is answered from the cache when an identical one (model identity, messages,
tools, sampling with its seed, schema: `synth.llm.cache.cache_key`) was answered and stored before
it is sent. Each answer is one object, `cache/llm/KEY[:2]/KEY.json`, created only if absent (the
first answer for a key wins, as locally), and written before the call counts as answered, so a
machine killed mid-shard loses only the calls still in flight and a run resumed anywhere sends no
answered request again. Two identical requests in flight at the same time on two machines both
pay. The local SQLite cache stays in front: a key is looked up in the bucket once per machine.
"""

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from synth.bucket import Bucket
from synth.llm.cache import ResponseCache
from synth.llm.types import ChatResponse

LOOKUPS_AT_ONCE = 16
"""Bucket reads in flight for one batch of cache misses (a panel shard asks hundreds of keys at once)."""


def object_key(key: str) -> str:
    return f"cache/llm/{key[:2]}/{key}.json"


class BucketResponseCache(ResponseCache):
    """The local cache, backed by the bucket for misses and written through to it."""

    def __init__(self, path: Path, bucket: Bucket):
        super().__init__(path)
        self.bucket = bucket

    def get_many(self, keys: list[str]) -> dict[str, ChatResponse]:
        found = super().get_many(keys)
        missing = [key for key in keys if key not in found]
        if not missing:
            return found
        with ThreadPoolExecutor(min(LOOKUPS_AT_ONCE, len(missing))) as pool:
            fetched = dict(zip(missing, pool.map(lambda key: self.bucket.get(object_key(key)), missing), strict=True))
        shared = {key: ChatResponse.model_validate_json(data) for key, data in fetched.items() if data is not None}
        super().put_many((key, "shared", response) for key, response in shared.items())
        return {**found, **shared}

    def put_many(self, entries: Iterable[tuple[str, str, ChatResponse]]) -> None:
        entries = list(entries)
        for key, _, response in entries:  # in the bucket first: the answer is shared once the call returns
            self.bucket.create(object_key(key), response.model_dump_json().encode())
        super().put_many(entries)

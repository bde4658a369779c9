"""A data root in S3-compatible object storage: the bucket, and versions published exactly once in it.

This is the first part of the data root as a URL (`SYNTH_HOME=s3://bucket/prefix`): the client,
how a version is committed where no rename exists, how a fresh machine finds every version from
the bucket alone, and how a changed part is caught. synth.store.bucket_root makes it a data root.

Why these libraries: writes go through obstore (the Rust `object_store` crate): it makes a
conditional put (`If-None-Match: *`, "create") a plain call, retries 5xx answers (503 SlowDown
included), dropped connections and timeouts with exponential backoff and jitter, and carries no AWS
SDK. pyarrow's S3 filesystem has no conditional put, and s3fs brings aiobotocore. Parquet is read
with pyarrow's own S3 filesystem (`arrow_filesystem`), whose datasets DuckDB scans in place, so no
DuckDB extension is downloaded (these machines have no network).

Publishing: a version's parts are written under `datasets/NAME/.parts/RUN/vN/` (RUN: the run's
id) with their SHA-256 in the manifest; the version exists once `datasets/NAME/vN/manifest.json`
is created by a conditional put. Two publishers racing for N: the bucket lets one create it, and
the other builds N+1 (rows carry their version number) and tries again. A crash before that put
leaves parts no manifest names: no version is half visible. A run that publishes again (resumed
after a crash after the put) finds its own manifest by run id and publishes nothing twice.

Credentials come from the standard AWS variables (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`,
`AWS_SESSION_TOKEN`, `AWS_REGION`) and the endpoint from `SYNTH_S3_ENDPOINT`; none is stored or printed.
`SYNTH_S3_RETRY_S` (default 60) is how long one request is retried before it fails.
"""

import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from synth.errors import ConfigError, StoreError, SynthError

_URL = re.compile(r"^s3://(?P<bucket>[a-z0-9][a-z0-9.\-]{1,61}[a-z0-9])(?:/(?P<prefix>.*))?$")


@dataclass(frozen=True)
class BucketURL:
    bucket: str
    prefix: str


def parse_bucket_url(url: str) -> BucketURL:
    """'s3://bucket/prefix' -> its parts; anything else is one line naming the form."""
    found = _URL.match(url.strip())
    if found is None:
        raise ConfigError(
            f"{url!r} is not a bucket URL like s3://my-bucket/synth (lower-case bucket name, then a prefix)"
        )
    return BucketURL(found.group("bucket"), (found.group("prefix") or "").strip("/"))


_MANIFEST = re.compile(r"^datasets/(?P<name>[^/]+)/v(?P<version>\d+)/manifest\.json$")


class Bucket:
    """One bucket and prefix: put, create (only if absent), get, list; errors as one line."""

    def __init__(self, url: str, environ: Mapping[str, str] = os.environ, retry_seconds: float | None = None):
        """`retry_seconds`: how long one request is retried with backoff before it fails (default
        SYNTH_S3_RETRY_S, else 60)."""
        from obstore.store import S3Store

        self.url = parse_bucket_url(url)
        self.endpoint = environ.get("SYNTH_S3_ENDPOINT") or None
        self.region = environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or "us-east-1"
        self._secrets = {
            key: environ[variable]
            for key, variable in (
                ("access_key_id", "AWS_ACCESS_KEY_ID"),
                ("secret_access_key", "AWS_SECRET_ACCESS_KEY"),
                ("session_token", "AWS_SESSION_TOKEN"),
            )
            if environ.get(variable)
        }
        retry = {
            "max_retries": 10,
            "retry_timeout": timedelta(seconds=retry_seconds or float(environ.get("SYNTH_S3_RETRY_S") or 60)),
            "backoff": {"init_backoff": timedelta(milliseconds=100), "max_backoff": timedelta(seconds=5), "base": 2},
        }
        self.store = S3Store(
            self.url.bucket,
            prefix=self.url.prefix or None,
            region=self.region,
            **({"endpoint": self.endpoint} if self.endpoint else {}),  # pyright: ignore[reportCallIssue]
            client_options={"allow_http": bool(self.endpoint and self.endpoint.startswith("http://"))},
            retry_config=retry,  # pyright: ignore[reportArgumentType]
            **self._secrets,  # pyright: ignore[reportArgumentType]
        )

    def __repr__(self) -> str:  # never the secrets
        return f"Bucket(s3://{self.url.bucket}/{self.url.prefix}, endpoint={self.endpoint})"

    def put(self, path: str, data: bytes | Path) -> None:
        """Write `path` from bytes or a local file (large files go up in parts)."""
        import obstore

        self._call(lambda: obstore.put(self.store, path, data), path)

    def download(self, path: str, target: Path) -> str | None:
        """Stream `path` into the local file `target`; its SHA-256, or None where nothing is there."""
        import obstore
        from obstore.exceptions import NotFoundError

        def stream() -> str:
            digest = hashlib.sha256()
            with open(target, "wb") as handle:
                for chunk in obstore.get(self.store, path).stream(min_chunk_size=8 << 20):
                    digest.update(chunk)
                    handle.write(chunk)
            return digest.hexdigest()

        try:
            return self._call(stream, path)
        except (NotFoundError, FileNotFoundError):
            return None

    def create(self, path: str, data: bytes) -> bool:
        """Write `path` only if nothing is there (a conditional put); False when something was."""
        import obstore
        from obstore.exceptions import AlreadyExistsError, PreconditionError

        try:
            self._call(lambda: obstore.put(self.store, path, data, mode="create"), path)
        except (AlreadyExistsError, PreconditionError):
            return False
        return True

    def get(self, path: str) -> bytes | None:
        import obstore
        from obstore.exceptions import NotFoundError

        try:
            return self._call(lambda: bytes(obstore.get(self.store, path).bytes()), path)
        except (NotFoundError, FileNotFoundError):
            return None

    def folders(self, prefix: str) -> list[str]:
        """The names of the folders directly under `prefix` (one delimited listing, not every key)."""
        import obstore

        listed = self._call(lambda: obstore.list_with_delimiter(self.store, prefix=prefix), prefix)
        return sorted(folder.rstrip("/").rsplit("/", 1)[-1] for folder in listed["common_prefixes"])

    def list(self, prefix: str) -> list[str]:
        import obstore

        return self._call(
            lambda: sorted(entry["path"] for batch in obstore.list(self.store, prefix=prefix) for entry in batch),
            prefix,
        )

    def arrow_filesystem(self):
        """pyarrow's S3 filesystem on the same bucket and credentials, for reading Parquet in place."""
        from pyarrow import fs

        endpoint = self.endpoint.split("://", 1)[-1] if self.endpoint else None
        scheme = self.endpoint.split("://", 1)[0] if self.endpoint and "://" in self.endpoint else "https"
        return fs.S3FileSystem(
            access_key=self._secrets.get("access_key_id"),
            secret_key=self._secrets.get("secret_access_key"),
            session_token=self._secrets.get("session_token"),
            region=self.region,
            endpoint_override=endpoint,
            scheme=scheme,
        )

    def arrow_path(self, path: str) -> str:
        return "/".join(part for part in (self.url.bucket, self.url.prefix, path) if part)

    def _call(self, operation, path: str):
        from obstore.exceptions import (
            AlreadyExistsError,
            NotFoundError,
            PermissionDeniedError,
            PreconditionError,
            UnauthenticatedError,
        )

        try:
            return operation()
        except (AlreadyExistsError, PreconditionError, NotFoundError, FileNotFoundError):
            raise  # obstore reports a missing object as either
        except (PermissionDeniedError, UnauthenticatedError):
            raise self._refused_credentials(path) from None
        except Exception as error:  # what is left after obstore's retries
            raise self._failed(error, path) from None

    def _refused_credentials(self, path: str) -> ConfigError:
        return ConfigError(
            f"s3://{self.url.bucket} refused the credentials for {path}: check AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN for temporary ones)"
        )

    def _failed(self, error: Exception, path: str) -> SynthError:
        """A refusal obstore passes on as a generic error, a missing bucket, or a bucket still
        unreachable, throttling or timing out after the retries."""
        text = str(error)
        if any(sign in text for sign in ("status code: 403", "InvalidAccessKeyId", "SignatureDoesNotMatch")):
            return self._refused_credentials(path)
        if "NoSuchBucket" in text:
            return ConfigError(
                f"s3://{self.url.bucket} does not exist at {self.endpoint or 'AWS'}: create the bucket first "
                f"(e.g. aws s3 mb s3://{self.url.bucket}), or fix the name in the data root URL"
            )
        first = text.splitlines()[0][:200]
        return StoreError(
            f"s3://{self.url.bucket} at {self.endpoint or 'AWS'} failed for {path} after retries with backoff "
            f"({type(error).__name__}: {first}); check SYNTH_S3_ENDPOINT and the network, then run again"
        )


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


Build = Callable[[int], tuple[Mapping[str, bytes | Path], Mapping]]
"""A version's parts (relative path -> bytes, or a local file) and manifest fields, for a version number:
rows carry their version, so a publisher that loses a number to another builds the next one anew."""


def publish(bucket: Bucket, name: str, run_id: str, build: Build) -> int:
    """Publish what `build` makes as the next version of `name`, once per `run_id`; returns its
    number. See the module docstring for why no version is ever half visible."""
    existing = find_run(bucket, name, run_id)
    if existing is not None:
        return existing
    number = max(versions(bucket, name), default=0) + 1
    while True:
        parts, manifest = build(number)
        staged = f"datasets/{name}/.parts/{run_id}/v{number}"
        entries = {}
        for path, data in parts.items():
            bucket.put(f"{staged}/{path}", data)
            size, digest = (
                (len(data), sha256(data)) if isinstance(data, bytes) else (data.stat().st_size, file_sha256(data))
            )
            entries[path] = {"key": f"{staged}/{path}", "bytes": size, "sha256": digest}
        body = {**manifest, "name": name, "version": number, "run_id": run_id, "parts": entries}
        if bucket.create(f"datasets/{name}/v{number}/manifest.json", json.dumps(body, sort_keys=True).encode()):
            return number
        mine = find_run(bucket, name, run_id)  # another publisher took `number`; or this run did, before a crash
        if mine is not None:
            return mine
        number = max(number, *versions(bucket, name)) + 1


def versions(bucket: Bucket, name: str) -> list[int]:
    """The committed version numbers of dataset `name`."""
    return sorted(number for _, number in manifest_keys(bucket, name))


def manifests(bucket: Bucket, name: str | None = None) -> list[dict]:
    """Every committed version's manifest (of `name`, or of every dataset), from the bucket alone:
    what a fresh machine's reindex reads."""
    found = []
    for dataset, number in manifest_keys(bucket, name):
        data = bucket.get(f"datasets/{dataset}/v{number}/manifest.json")
        if data is not None:
            found.append(json.loads(data))
    return found


def find_run(bucket: Bucket, name: str, run_id: str) -> int | None:
    for manifest in manifests(bucket, name):
        if manifest["run_id"] == run_id:
            return int(manifest["version"])
    return None


def verify(bucket: Bucket, manifest: Mapping) -> list[str]:
    """The parts of a committed version that are missing or whose bytes changed (by SHA-256)."""
    problems = []
    for path, entry in manifest["parts"].items():
        data = bucket.get(entry["key"])
        if data is None:
            problems.append(f"{path}: missing")
        elif sha256(data) != entry["sha256"]:
            problems.append(f"{path}: changed ({len(data)} bytes, hash differs from the manifest's)")
    return problems


def manifest_keys(bucket: Bucket, name: str | None = None) -> list[tuple[str, int]]:
    """(dataset, version) of every manifest, listing only `name`'s keys when given."""
    keys = []
    for path in bucket.list(f"datasets/{name}/" if name else "datasets/"):
        found = _MANIFEST.match(path)
        if found is not None:
            keys.append((found.group("name"), int(found.group("version"))))
    return keys

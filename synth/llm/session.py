"""What one run needs to call models: the declared models, one shared response cache, one ledger.

Recipes ask for a role (`generator`, `solver`, `judge`, `teacher`); `roles` maps each to a declared
model name. Every client of the run shares the cache and the ledger, so the run summary counts
all tokens, cache hits and failures, and the budget covers the whole run.
"""

from synth.bucket import Bucket
from synth.errors import ConfigError
from synth.llm.accounting import Budget, Ledger
from synth.llm.base import LLMBackend
from synth.llm.bucket_cache import BucketResponseCache
from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.models import ModelPool, ModelSpec
from synth.settings import Settings


def response_cache(settings: Settings) -> ResponseCache:
    """This machine's response cache; where the data root is a bucket, shared through it
    (synth.llm.bucket_cache: an answer any machine paid for is not paid again)."""
    if settings.bucket is None:
        return ResponseCache(settings.llm_cache_path)
    return BucketResponseCache(settings.llm_cache_path, Bucket(settings.bucket))


class LLMSession:
    def __init__(
        self,
        settings: Settings,
        models: dict[str, ModelSpec],
        roles: dict[str, str] | None = None,
        budget: Budget | None = None,
        use_cache: bool = True,
        log=print,
        ledger: Ledger | None = None,
        backends: dict[str, LLMBackend] | None = None,
    ):
        self.models = models
        self.log = log
        self.roles = dict(roles or {})
        self.pool = ModelPool(settings, models, log, injected=backends)
        self.cache = response_cache(settings) if use_cache else None
        self.ledger = ledger or Ledger(budget=budget or Budget())
        self._clients: dict[str, LLMClient] = {}

    def client(self, role: str) -> LLMClient:
        """The client for a role (or, if no role of that name is mapped, for a model of that name)."""
        name = self.roles.get(role, role)
        if name not in self.models and name not in self.pool.injected:
            raise ConfigError(
                f"role {role!r} refers to model {name!r}, which is not declared; declared models: "
                f"{', '.join(self.models)} "
                "(declare more under `models:` in flows.yaml)"
            )
        if name not in self._clients:
            backend = self.pool.backend(name)
            spec = self.models.get(name)
            price = spec.price if spec is not None else None
            if price is not None:
                self.ledger.prices[backend.model_id] = price
            self._clients[name] = LLMClient(backend, cache=self.cache, ledger=self.ledger, log=self.log)
        return self._clients[name]

    async def aclose(self) -> None:
        await self.pool.aclose()
        self._clients.clear()
        if self.cache is not None:
            self.cache.close()

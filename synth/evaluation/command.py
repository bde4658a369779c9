"""`synth eval` end to end: resolve the model and what it is evaluated on, build the world's
tools, run the agent, store the run once, and hand back its figures."""

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from synth.errors import ConfigError
from synth.evaluation.agent_run import EvalSetup, run_eval
from synth.evaluation.tasks import EvalTask, benchmark_tasks, version_tasks
from synth.llm.accounting import Budget
from synth.llm.base import LLMBackend
from synth.llm.gate import FailurePolicy
from synth.llm.models import ModelSpec
from synth.llm.session import LLMSession
from synth.schemas import EvalAttempt, EvalRun
from synth.search.budget import AgentBudget
from synth.search.world_settings import WorldSettings, move_world_keys
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.evals import evals_dir, load_attempts, load_run, save_eval


@dataclass
class EvalRequest:
    model: str
    """A declared model name, or a checkpoint folder (loaded with in-process vLLM)."""
    dataset: str | None = None
    """NAME[@VERSION] of a dataset version."""
    benchmark: Path | None = None
    split: str = "test"
    k: int = 1
    limit: int | None = None
    agent: AgentBudget = field(default_factory=AgentBudget)
    world: dict = field(default_factory=dict)
    """Overrides of the world section (retriever, retrieval_k, contract, kg, corpus)."""
    validation_fraction: float | None = None
    test_fraction: float | None = None
    f1_threshold: float = 0.8
    budget: Budget = field(default_factory=Budget)
    failures: FailurePolicy = field(default_factory=FailurePolicy)


@dataclass
class EvalOutcome:
    run: EvalRun
    attempts: list[EvalAttempt]
    stored: bool
    """False when this very eval was stored before (nothing is stored twice)."""
    llm: dict
    """The ledger's summary: requests, cache hits, tokens."""


def resolve_model(name: str, models: dict[str, ModelSpec]) -> tuple[str, dict[str, ModelSpec]]:
    """The declared models, with a checkpoint folder declared under its own path if that is what was given."""
    if name in models:
        return name, models
    folder = Path(name)
    if folder.is_dir() and (folder / "config.json").exists():
        spec = ModelSpec(backend="vllm", model=str(folder.absolute()), budgets="embedded")
        return str(folder.absolute()), {**models, str(folder.absolute()): spec}
    raise ConfigError(
        f"{name!r} is neither a declared model ({', '.join(models)}) nor a checkpoint folder with a config.json; "
        "declare it under `models:` in flows.yaml or give the folder a trainer saved"
    )


def evaluate(
    settings: Settings,
    request: EvalRequest,
    models: dict[str, ModelSpec],
    log=print,
    backends: dict[str, LLMBackend] | None = None,
) -> EvalOutcome:
    if (request.dataset is None) == (request.benchmark is None):
        raise ConfigError("give a dataset (NAME[@VERSION]) or --benchmark FILE to evaluate on, not both")
    model, models = resolve_model(request.model, models)
    fractions = settings.split_fractions(request.validation_fraction, request.test_fraction)
    if request.dataset is not None:
        with Catalog.open(settings, read_only=True) as catalog:
            version = catalog.resolve(request.dataset)
        tasks = version_tasks(settings, version, request.split, fractions, request.limit)
        made_in = move_world_keys(dict(version.config or {})).get("world") or {}
        world = WorldSettings.model_validate({**made_in, **request.world})
        source, split = version.ref, request.split
    else:
        assert request.benchmark is not None
        tasks = benchmark_tasks(request.benchmark, request.limit)
        world = WorldSettings.model_validate(request.world)
        source, split = request.benchmark.name, "all"
    setup = EvalSetup(
        model=model,
        source=source,
        split=split,
        k=request.k,
        agent=request.agent,
        f1_threshold=request.f1_threshold,
        world=world.model_dump(mode="json"),
        fractions={"validation": fractions.validation, "test": fractions.test} if request.dataset else {},
        budget=request.budget,
        failures=request.failures,
    )
    log(f"eval: {model} on {source} ({split}: {len(tasks)} items), k={request.k}, search {world.retriever}")
    tools = world.open(settings, log).tools(world.retriever, world.retrieval_k)
    return asyncio.run(_evaluate(settings, models, model, tools, tasks, setup, log, backends))


async def _evaluate(settings, models, model, tools, tasks: list[EvalTask], setup: EvalSetup, log, backends):
    session = LLMSession(settings, models, roles={}, budget=setup.budget, log=log, backends=backends)
    try:
        run, attempts = await run_eval(session, tools, tasks, setup, log)
    finally:
        await session.aclose()
    stored = not (evals_dir(settings) / run.id / "run.parquet").exists()
    if stored:
        save_eval(settings, run, attempts)
        with Catalog.open(settings) as catalog:
            catalog.refresh_views()
    else:
        run, attempts = load_run(settings, run.id), load_attempts(settings, run.id)
    return EvalOutcome(run, attempts, stored, session.ledger.summary())

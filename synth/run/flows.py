"""Prefect flows, one per recipe: a scheduler over the run's plan (`synth.run.plan`) that submits one
task per shard of each stage (each self-play round in order, construction, each panel shard, the
label, each distillation shard) as soon as what that shard needs is saved, then a publish task. A
shard's distillation therefore starts while other shards are still on the panel (where the recipe
labels item by item), and on a Dask task runner the shards of different stages overlap across
workers; `staged=True` waits for each whole stage instead, as `synth generate --staged` does. Tasks
take and return plain values (the data root, the run id, indexes, refs), never clients, so a Dask
worker on another machine can run a shard: it opens the run in the data root, rebuilds the recipe's
world from it, and its model calls go through its own session (with the shared response cache).
Where the data root is a bucket (`SYNTH_HOME=s3://...`), workers share nothing else: each keeps
its own local copy (`SYNTH_LOCAL_HOME`) and reads and saves the run's stages through the bucket.

A rerun of the same flow and parameters resumes the unfinished run: saved stages are skipped.
Tasks retry with exponential backoff, except on errors a retry cannot fix (bad configuration,
missing files). Shard tasks (panel and distillation) are tagged `model:NAME` for every model they call, so a concurrency
limit on that tag (`max_parallel_shards` in flows.yaml) caps the shards in flight per model backend.
"""

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.futures import PrefectFuture, as_completed
from prefect.task_runners import ThreadPoolTaskRunner
from prefect.tasks import exponential_backoff

from synth.errors import ConfigError, SynthError
from synth.pipelines.recipes import get_recipe
from synth.redact import install_logging_filter
from synth.run.plan import PLAN, Grain, Stage, by_kind, ready, shards, stage_names
from synth.run.publishing import publish
from synth.run.runner import DEFAULT_SHARD_SIZE, Run, RunRequest, open_run
from synth.settings import Settings
from synth.store.bucket_root import pull
from synth.store.workdir import RunDir

# Process-wide on purpose: a worker loads a run's world and starts its model engines once for all
# the shards of that run it gets (tasks receive the data root and run id, not objects);
# `publish_task` drops the entry.
_RUNS: dict[tuple[str, str], Run] = {}
_RUNS_LOCK = threading.Lock()


def _run(home: str, run_id: str, runner: str) -> Run:
    """This process's `Run` of run `run_id` in data root `home` (a folder or a bucket URL), made
    once, so a worker loads the recipe's world and starts its model engines once for all the shards it gets."""
    with _RUNS_LOCK:
        if (home, run_id) not in _RUNS:
            settings = Settings(home=Path(home))
            _RUNS[home, run_id] = Run(settings, RunDir.attach(settings, run_id), runner=runner)
        return _RUNS[home, run_id]


def _release(home: str, run_id: str) -> None:
    with _RUNS_LOCK:
        run = _RUNS.pop((home, run_id), None)
    if run is not None:
        loop = _SHARD_LOOP  # the model clients' connections of the shards this process ran live there
        run.close((lambda work: asyncio.run_coroutine_threadsafe(work, loop).result()) if loop else asyncio.run)


_SHARD_LOOP: asyncio.AbstractEventLoop | None = None


def _shard_loop() -> asyncio.AbstractEventLoop:
    """This process's one event loop for shard coroutines, on a thread of its own. A Dask worker
    with several threads holds several shard tasks at once; their coroutines all run here, so they
    share the model clients as the shards of `synth generate` share them in its one loop (a client's
    connection pool and concurrency limit belong to one event loop) and a worker starts its next
    shard while the last one's longest rollouts finish."""
    global _SHARD_LOOP
    with _RUNS_LOCK:
        if _SHARD_LOOP is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="synth-shards", daemon=True).start()
            _SHARD_LOOP = loop
        return _SHARD_LOOP


def _retry_transient(task, task_run, state) -> bool:
    """Retry unless the error is one a user must fix (SynthError) or a programming error."""
    try:
        state.result()
    except (SynthError, TypeError, ValueError, KeyError, AttributeError):
        return False
    except Exception:
        return True
    return False


_RETRIES = {
    "retries": 2,
    "retry_delay_seconds": exponential_backoff(backoff_factor=5),
    "retry_condition_fn": _retry_transient,
}


@task(**_RETRIES)
def stage_task(home: str, run_id: str, runner: str, kind: str, index: int) -> int:
    """Shard `index` of the plan's stage `kind` (`synth.run.plan.PLAN`); its task run is named after it.
    A coroutine step runs on the process's shard loop (`_shard_loop`), the others in the task's thread."""
    stage, run = by_kind(kind), _run(home, run_id, runner)
    if stage.async_step is not None:
        asyncio.run_coroutine_threadsafe(stage.async_step(run, index), _shard_loop()).result()
    else:
        stage.make(run, index)
    return index


@task(name="publish", **_RETRIES)
def publish_task(
    home: str, run_id: str, runner: str, flow_run_id: str | None, ui_url: str | None, resumed: list[str]
) -> dict[str, Any]:
    try:
        version = publish(_run(home, run_id, runner), flow_run_id=flow_run_id, ui_url=ui_url, resumed=resumed)
    finally:
        _release(home, run_id)
    return {"ref": version.ref, "items": version.row_counts.get("items", 0), "run_id": run_id}


def _model_tags(run: Run, models: list[str]) -> list[str]:
    """`model:NAME` for each model a shard calls (`--llm` replaces them all)."""
    return sorted({f"model:{name}" for name in ([run.context.llm] if run.context.llm else models)})


def _ui_url() -> str | None:
    """The flow run's page in the Prefect UI; None on a temporary server, which has no UI."""
    from prefect.runtime import flow_run

    url = flow_run.get_flow_run_ui_url()
    return url if url and url.startswith("http") else None


def worker_flows_file(given: str | None) -> str | None:
    """The flows file a run reads its model declarations from: the one given, else the worker's
    SYNTH_FLOWS_FILE, so a deployment carries no path of the machine that registered it."""
    return given or os.environ.get("SYNTH_FLOWS_FILE") or None


def worker_settings(home: str | None) -> Settings:
    """The data root: the one given, else the worker's SYNTH_HOME. A deployed run without either
    would write into the process worker's temporary folder and lose the dataset."""
    if home:
        return Settings(home=Path(home))
    if not os.environ.get("SYNTH_HOME"):
        raise ConfigError(
            "this deployed run has no data root: set SYNTH_HOME in the worker's environment (e.g. "
            "SYNTH_HOME=/data/synth prefect worker start --pool POOL), and SYNTH_FLOWS_FILE if the entry uses "
            "models declared in flows.yaml"
        )
    return Settings()


def run_recipe(
    recipe: str,
    config: dict[str, Any] | None = None,
    dataset: str | None = None,
    flows_file: str | None = None,
    shard_size: int = DEFAULT_SHARD_SIZE,
    llm: str | None = None,
    home: str | None = None,
    limits: dict[str, Any] | None = None,
    staged: bool = False,
) -> dict[str, Any]:
    """The body every recipe flow shares."""
    from prefect.context import get_run_context
    from prefect.runtime import flow_run

    install_logging_filter()  # a worker's logs carry no key either
    settings = worker_settings(home)
    if settings.bucket is not None:  # the versions other machines published: a finished run is found
        pull(settings, quiet=True)
    request = RunRequest(
        recipe, dict(config or {}), dataset, llm, worker_flows_file(flows_file), shard_size, limits, slices=not staged
    )
    run_dir = open_run(settings, request)
    runner = f"prefect:{type(get_run_context().task_runner).__name__}"  # pyright: ignore[reportAttributeAccessIssue]
    home, run_id = settings.root, run_dir.id
    resumed = run_dir.stages()
    run = _run(home, run_id, runner)
    try:
        with run.outcome_recorded(flow_run_id=flow_run.get_id(), ui_url=_ui_url(), resumed=resumed):
            earlier = run.published_version()
            if earlier is not None:
                return {"ref": earlier.ref, "items": earlier.row_counts.get("items", 0), "run_id": run_dir.id}
            schedule(run, lambda stage, index: _submit(run, stage, index, home, run_id, runner), staged)
            return publish_task(home, run_id, runner, flow_run.get_id(), _ui_url(), resumed)
    except Exception:
        _release(home, run_id)
        raise
    finally:
        run_dir.release()


def _submit(run: Run, stage: Stage, index: int, home: str, run_id: str, runner: str) -> PrefectFuture:
    """Shard `index` of `stage` as a task, tagged `model:NAME` for each model a shard calls."""
    tags = _model_tags(run, run.recipe.stage_models(stage.kind)) if stage.grain is not Grain.BATCH else None
    return stage_task.with_options(name=stage.kind, tags=tags).submit(home, run_id, runner, stage.kind, index)


POLL_S = 0.5
"""How often the flow looks for shards made ready by a task still running (a slice of candidates)."""


def schedule(run: Run, submit, staged: bool = False) -> None:
    """Submit every shard of every stage of the plan once it is `ready`, until all are saved.
    `submit(stage, index)` returns the shard's future. On a failure nothing more is submitted; the
    shards already out finish (and are saved), then the first failure is raised."""
    pending: dict[PrefectFuture, tuple[Stage, int]] = {}
    submitted: set[tuple[str, int]] = set()
    failure: BaseException | None = None
    while True:
        if failure is None:
            for stage in PLAN:
                for index in range(shards(run, stage) or 0):
                    key = (stage.kind, index)
                    if (
                        key not in submitted
                        and not run.dir.done(stage.name(index))
                        and ready(run, stage, index, staged)
                    ):
                        submitted.add(key)
                        pending[submit(stage, index)] = (stage, index)
        if not pending:
            break
        try:  # woken at least every POLL_S: construction saves slices of candidates as it goes
            finished = next(as_completed(list(pending), timeout=POLL_S))
        except TimeoutError:
            continue
        pending.pop(finished)
        run.dir.refresh()  # the task saved its stage, maybe on another machine
        try:
            finished.result()
        except BaseException as error:  # noqa: BLE001 - the first one is raised once the others are in
            failure = failure or error
    if failure is not None:
        raise failure
    unfinished = [name for name in stage_names(run) if not run.dir.done(name)]
    if unfinished:
        raise RuntimeError(f"the flow stopped with stages never ready: {', '.join(unfinished)} (a plan bug)")


def dask_runner(spec: dict[str, Any]):
    """A DaskTaskRunner for a flows.yaml `task_runner` entry (the `dask` extra: prefect-dask)."""
    try:
        from prefect_dask import DaskTaskRunner  # pyright: ignore[reportPrivateImportUsage]
    except ImportError:
        raise ConfigError("task_runner kind dask needs prefect-dask: pip install 'synth-data[dask]'") from None
    if spec.get("address"):
        return DaskTaskRunner(address=spec["address"])
    threads = spec.get("threads", 4)  # shard tasks a worker holds at once (their coroutines share its shard loop)
    cluster = {"n_workers": spec.get("workers", 2), "threads_per_worker": threads, "processes": True}
    if threads > 1:  # a worker without an API starts a temporary Prefect server of its own, which threads would race
        from prefect.client.orchestration import get_client

        cluster["env"] = {"PREFECT_API_URL": str(get_client(sync_client=True).api_url)}
    return DaskTaskRunner(cluster_kwargs=cluster)


# One shard at a time in the flow's process: the shards share the process's model engines. Dask
# spreads them over workers, each holding `threads` shard tasks whose coroutines share the worker's
# shard loop (`_shard_loop`), as `synth generate` runs a stage's shards together in one event loop.
def _recipe_flow(recipe: str, summary: str):
    """The Prefect flow of `recipe` (named synth-NAME); `task_runner` {kind: dask, ...} runs the
    stages as a subflow on Dask. `config`: the recipe's parameters as nested values."""

    def recipe_flow(
        config: dict[str, Any] | None = None,
        dataset: str | None = None,
        flows_file: str | None = None,
        shard_size: int = DEFAULT_SHARD_SIZE,
        llm: str | None = None,
        home: str | None = None,
        task_runner: dict[str, Any] | None = None,
        limits: dict[str, Any] | None = None,
        staged: bool = False,
    ) -> dict[str, Any]:
        if task_runner and task_runner.get("kind") == "dask":
            on_dask = made.with_options(name=f"synth-{name}-dask", task_runner=dask_runner(task_runner))
            return on_dask(config, dataset, flows_file, shard_size, llm, home, None, limits, staged)
        return run_recipe(recipe, config, dataset, flows_file, shard_size, llm, home, limits, staged)

    name = recipe.rpartition(":")[2] if ":" in recipe else recipe
    # deployments import the flow by this name from this module (`flows.py:multihop_flow`)
    recipe_flow.__name__ = recipe_flow.__qualname__ = f"{name}_flow"
    recipe_flow.__doc__ = summary
    made = flow(  # pyright: ignore[reportCallIssue]  (prefect's overloads and its runner's generic type)
        name=f"synth-{name}",
        persist_result=False,
        log_prints=True,
        task_runner=ThreadPoolTaskRunner(max_workers=1),  # pyright: ignore[reportArgumentType]
    )(recipe_flow)
    return made


multihop_flow = _recipe_flow(
    "multihop",
    "Recipe `multihop` as a Prefect flow: knowledge-graph questions, solver panel in shards, one published version.",
)
selfplay_flow = _recipe_flow(
    "selfplay",
    "Recipe `selfplay` as a Prefect flow: one task per round (proposer, gates, RAG verification, "
    "solver panel, band), then construction, labels, optional distillation shards, publishing.",
)

curate_flow = _recipe_flow(
    "curate",
    "Recipe `curate` as a Prefect flow: checks on a published version or an imported file, optional solver panel "
    "shards and labels, one version whose parent is the source.",
)

FLOWS = {"multihop": multihop_flow, "selfplay": selfplay_flow, "curate": curate_flow}
"""Recipe name -> its flow (a module-level name, so served deployments can import it)."""


def flow_for(recipe: str):
    """The flow of a built-in recipe, or a new one for a `module:Class` recipe (runnable with
    `synth flows run`; a deployment needs a module-level name, as the built-ins have)."""
    if recipe in FLOWS:
        return FLOWS[recipe]
    recipe_class = get_recipe(recipe)
    return _recipe_flow(recipe, f"Recipe {recipe_class.name} ({recipe}) as a Prefect flow: {recipe_class.description}")

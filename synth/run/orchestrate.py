"""`synth flows`: run, serve and deploy the entries of flows.yaml as Prefect flows.

`run` works without a server (Prefect starts a temporary one in this process). `serve` and
`deploy` register schedules, which only a real server fires: they need PREFECT_API_URL.

A deployed entry runs on a worker anywhere synth is installed: its entry point is a module path
(`synth.run.flows.multihop_flow`), it has no pull steps, and it holds no path of the machine
that registered it: the worker's SYNTH_HOME is the data root (required) and its SYNTH_FLOWS_FILE
declares the models the entry names. A served entry runs in the serving process,
under its own deployment name (`NAME-served`), so `serve` and `deploy` never replace each other.
"""

import os
from pathlib import Path
from typing import Any

from synth.errors import ConfigError
from synth.run.flows_file import FlowEntry, get_flow, load_flows
from synth.run.prefect_env import configure_prefect
from synth.settings import Settings


def flow_parameters(settings: Settings, path: Path, name: str, entry: FlowEntry) -> dict[str, Any]:
    """The recipe flow's parameters for one entry: plain values, as a deployment stores them."""
    return {
        "config": entry.params,
        "dataset": entry.dataset or name,
        "flows_file": str(path.absolute()),
        "shard_size": entry.shard_size,
        "home": settings.root,  # a bucket URL stays one: workers on other machines reach it
        "task_runner": entry.task_runner.model_dump(mode="json"),
        "staged": entry.staged,
        "llm": entry.llm,
        "limits": entry.limits().model_dump(mode="json"),
    }


def _recipe_flow(recipe: str):
    from synth.run.flows import flow_for  # deferred: the flows import Prefect (seconds); listing needs none

    return flow_for(recipe)


def apply_shard_limits(path: Path) -> dict[str, int]:
    """Set a Prefect concurrency limit on tag `model:NAME` for every model that declares
    `max_parallel_shards`: shard tasks carry that tag, so the server holds back the rest."""
    from prefect.client.orchestration import get_client

    limits = {
        f"model:{name}": spec.max_parallel_shards
        for name, spec in load_flows(path).models.items()
        if spec.max_parallel_shards
    }
    if limits:
        with get_client(sync_client=True) as client:
            for tag, limit in limits.items():
                client.create_concurrency_limit(tag=tag, concurrency_limit=limit)
    return limits


def run_flow(settings: Settings, path: Path, name: str) -> dict[str, Any]:
    """Run one entry now, as a Prefect flow run (returns the published version's ref and counts)."""
    configure_prefect(settings)
    _, entry = get_flow(path, name)
    flow = _recipe_flow(entry.recipe)
    apply_shard_limits(path)
    return flow(**flow_parameters(settings, path, name, entry))


def _require_server(command: str) -> str:
    url = os.environ.get("PREFECT_API_URL")
    if not url:
        raise ConfigError(
            f"synth flows {command} registers schedules, which only a running Prefect server fires: start one "
            "(`prefect server start --host 127.0.0.1`) and set PREFECT_API_URL=http://127.0.0.1:4200/api"
        )
    return url


def _scheduled(path: Path, names: tuple[str, ...]) -> list[tuple[str, FlowEntry]]:
    flows = load_flows(path, check=True).flows
    unknown = [name for name in names if name not in flows]
    if unknown:
        raise ConfigError(f"no flow {unknown[0]!r} in {path}; it defines: {', '.join(flows) or 'none'}")
    chosen = [(name, flows[name]) for name in (names or flows)]
    if not any(entry.schedule for _, entry in chosen):
        raise ConfigError(
            f"no `schedule:` on {'these flows' if names else f'any flow in {path}'}; add a cron expression, e.g. "
            "schedule: '0 3 * * *'"
        )
    return chosen


SERVED_SUFFIX = "-served"
"""Served deployments are named apart from deployed ones: each registration would replace the other's."""


def _deployment_options(
    settings: Settings, path: Path, name: str, entry: FlowEntry, portable: bool = False
) -> dict[str, Any]:
    """What a served and a deployed entry share: schedule, parameters, description, tags; a
    portable (deployed) entry leaves the data root and flows file to the worker."""
    from prefect.schedules import Cron

    parameters = flow_parameters(settings, path, name, entry)
    if portable:
        parameters.update(home=None, flows_file=None)
    return {
        "name": entry.deployment or name,
        "schedule": Cron(str(entry.schedule), timezone=entry.timezone),
        "parameters": parameters,
        "description": entry.description or None,
        "tags": ["synth", f"recipe:{entry.recipe}"],
    }


def deployments(settings: Settings, path: Path, names: tuple[str, ...] = ()) -> list:
    """A Prefect deployment (not yet registered) for each chosen entry with a schedule."""
    chosen = []
    for name, entry in _scheduled(path, names):
        if entry.schedule:
            options = _deployment_options(settings, path, name, entry)
            chosen.append(
                _recipe_flow(entry.recipe).to_deployment(**{**options, "name": options["name"] + SERVED_SUFFIX})
            )
    return chosen


def serve_flows(settings: Settings, path: Path, names: tuple[str, ...] = ()) -> None:
    """Register the schedules with the server and run their flow runs from this process until stopped."""
    configure_prefect(settings)
    _require_server("serve")
    from prefect import serve

    chosen = deployments(settings, path, names)
    apply_shard_limits(path)
    serve(*chosen, print_starting_message=True)


def deploy_flows(settings: Settings, path: Path, names: tuple[str, ...] = ()) -> list[str]:
    """Register each scheduled entry as a deployment on its `work_pool`; a worker of that pool
    (`prefect worker start --pool NAME`, anywhere synth is installed) runs them."""
    configure_prefect(settings)
    url = _require_server("deploy")
    from prefect.client.orchestration import get_client
    from prefect.deployments.runner import EntrypointType  # pyright: ignore[reportPrivateImportUsage]
    from prefect.exceptions import ObjectNotFound

    chosen = [(name, entry) for name, entry in _scheduled(path, names) if entry.schedule]
    for name, entry in chosen:
        if not entry.work_pool:
            raise ConfigError(
                f"{path}: flows.{name}.work_pool is not set; `synth flows deploy` needs the work pool that runs it"
            )
    with get_client(sync_client=True) as client:
        for pool in sorted({str(entry.work_pool) for _, entry in chosen}):
            try:
                client.read_work_pool(pool)
            except ObjectNotFound:
                raise ConfigError(
                    f"work pool {pool!r} does not exist on the Prefect server at {url}; create it with "
                    f"`prefect work-pool create {pool} --type process`, then deploy again"
                ) from None
    apply_shard_limits(path)
    ids = []
    for name, entry in chosen:
        deployment = _recipe_flow(entry.recipe).to_deployment(
            **_deployment_options(settings, path, name, entry, portable=True),
            entrypoint_type=EntrypointType.MODULE_PATH,  # imported from the worker's synth, no pull steps
        )
        ids.append(str(deployment.apply(work_pool_name=entry.work_pool)))
    return ids

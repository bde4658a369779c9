"""Exports of one published version to the formats trainers read."""

from collections.abc import Callable
from pathlib import Path

from synth.contract import get_contract
from synth.errors import ConfigError
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.export import chatml, dpo, hf, jsonl, searchr1, searchr1_sft, sft, sharegpt, verl
from synth.store.export.options import ExportRequest, ExportResult

FORMATS: dict[str, str] = {
    "sft": "SFT chat rows {messages, tools} in OpenAI format from the selected teacher trajectories (.parquet or "
    ".jsonl)",
    "sft-chatml": "the same as plain role/content chat with <tool_call>/<tool_response> tags (Qwen/Hermes ChatML)",
    "sharegpt": "the same in LLaMA-Factory's sharegpt format (human/function_call/observation/gpt, tools column)",
    "searchr1-sft": "the same as one Search-R1 completion (<think>/<search>/<information>/<answer>) per question",
    "dpo": "TRL conversational preference pairs {prompt, chosen, rejected, tools}: selected vs incorrect",
    "verl": "verl RL Parquet with its tool_config.yaml, tools module and reward file beside it",
    "searchr1": "Search-R1 training Parquet (verl row + id, question, golden_answers; tag-protocol prompt)",
    "hf": "Hugging Face datasets folder of the items (datasets.load_from_disk)",
    "jsonl": "every item field as JSON Lines, privileged information included",
}


def _exporter(name: str) -> Callable[[ExportRequest], ExportResult]:
    return {
        "sft": sft.export,
        "sft-chatml": chatml.export,
        "sharegpt": sharegpt.export,
        "searchr1-sft": searchr1_sft.export,
        "dpo": dpo.export,
        "verl": verl.export,
        "searchr1": searchr1.export,
        "hf": hf.export,
        "jsonl": jsonl.export,
    }[name]


ROLES = ("teacher", "proposer")
PROPOSER_FORMATS = ("sft", "sft-chatml", "sharegpt")
"""Formats that can carry self-play proposer trajectories (plain chat with tool calls)."""
ARGUMENTS = ("object", "string")
REASONING = ("keep", "drop")
"""--reasoning: the assistant turns' reasoning kept in trajectory exports (as each consumer reads it) or dropped."""


def export_version(settings: Settings, ref: str, fmt: str, out: Path, **options) -> ExportResult:
    """Export the published version `ref` (NAME or NAME@VERSION) as `fmt` to `out`."""
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")
    role = options.get("role", "teacher")
    if role not in ROLES:
        raise ConfigError(f"unknown trajectory role {role!r}; choose one of {', '.join(ROLES)}")
    if options.get("arguments", "object") not in ARGUMENTS:
        raise ConfigError(f"unknown --arguments {options['arguments']!r}; choose object or string")
    if options.get("reasoning", "keep") not in REASONING:
        raise ConfigError(f"unknown --reasoning {options['reasoning']!r}; choose keep or drop")
    if options.get("contract") is not None:
        get_contract(options["contract"])
    if role != "teacher" and fmt not in PROPOSER_FORMATS:
        raise ConfigError(
            f"--role {role} exports with {' or '.join(PROPOSER_FORMATS)} only ({fmt} is built around answering "
            "a question); drop --role to export teacher trajectories"
        )
    with Catalog.open(settings, read_only=True) as catalog:
        version = catalog.resolve(ref)
    return _exporter(fmt)(ExportRequest(settings=settings, version=version, out=Path(out), **options))

"""The export formats, in one table: what the CLI offers and lists, what `export_version` runs.

Plain data, cheap to import (`synth export --help` reads it): each format names the module whose
`export(request) -> ExportResult` writes it, imported only when that format is exported. A new
format is one module and one entry here (or `register_format` from outside the package).
"""

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class ExportFormat:
    name: str
    description: str
    """One line for `synth export --help` and the docs."""
    target: str
    """Who reads it (the trainer or library whose loader the format is checked against)."""
    carries: Literal["trajectories", "items"]
    """Trajectory formats write teacher (or proposer) conversations; item formats write questions."""
    module: str
    """The module with `export(request) -> ExportResult`."""
    proposer: bool = False
    """It can also carry self-play proposer trajectories (`--role proposer`)."""

    def exporter(self) -> Callable:
        return importlib.import_module(self.module).export


EXPORT_FORMATS: dict[str, ExportFormat] = {}


def register_format(entry: ExportFormat) -> ExportFormat:
    EXPORT_FORMATS[entry.name] = entry
    return entry


for _entry in (
    ExportFormat(
        "sft",
        "SFT chat rows {messages, tools} (OpenAI format) from selected teacher trajectories",
        "TRL SFTTrainer",
        "trajectories",
        "synth.store.export.sft",
        proposer=True,
    ),
    ExportFormat(
        "sft-chatml",
        "the same as role/content chat with <tool_call>/<tool_response> tags (Qwen/Hermes)",
        "TRL SFTTrainer, any ChatML trainer",
        "trajectories",
        "synth.store.export.chatml",
        proposer=True,
    ),
    ExportFormat(
        "sharegpt",
        "the same for LLaMA-Factory: human/function_call/observation/gpt turns, tools column",
        "LLaMA-Factory",
        "trajectories",
        "synth.store.export.sharegpt",
        proposer=True,
    ),
    ExportFormat(
        "searchr1-sft",
        "the same as Search-R1 text: <think>, <search>, <information>, <answer>",
        "Search-R1-style SFT",
        "trajectories",
        "synth.store.export.searchr1_sft",
    ),
    ExportFormat(
        "dpo",
        "TRL preference pairs {prompt, chosen, rejected, tools}: selected vs incorrect",
        "TRL DPOTrainer",
        "trajectories",
        "synth.store.export.dpo",
    ),
    ExportFormat(
        "verl",
        "verl RL Parquet + tool_config.yaml, tools module and reward file beside it",
        "verl (main_ppo), TRL GRPOTrainer",
        "items",
        "synth.store.export.verl",
    ),
    ExportFormat(
        "searchr1",
        "Search-R1 training Parquet with its tag-protocol prompt",
        "Search-R1",
        "items",
        "synth.store.export.searchr1",
    ),
    ExportFormat(
        "hf",
        "a Hugging Face datasets folder of the items (datasets.load_from_disk)",
        "datasets",
        "items",
        "synth.store.export.hf",
    ),
    ExportFormat(
        "jsonl",
        "every item field as JSON Lines, privileged information included",
        "any",
        "items",
        "synth.store.export.jsonl",
    ),
):
    register_format(_entry)

"""verl RL Parquet: one row per item, in the exact field names and types verl's RLHFDataset reads.

    {"data_source": str, "prompt": [{"role": "user", "content": str}], "ability": str,
     "reward_model": {"style": "rule", "ground_truth": {"target": [str, ...]}},
     "extra_info": {"split": str, "index": int, ..., "need_tools_kwargs": true, "tools_kwargs": {...}},
     "agent_name": "tool_agent"}

For multi-turn tool rollouts, `agent_name` selects verl's tool agent loop and `extra_info.tools_kwargs`
hands each tool (`search`, `open`) its per-row `create_kwargs` (ground truth, question, data_source),
the layout of verl's own Search-R1-like preprocessing; single-turn trainers ignore both, so one file
serves either. The `agent_name` column is last, after the five columns every verl row has.

verl picks the reward function by `data_source`. The default `synth_<recipe>` is scored by
`synth/rewards.py` (pass it as custom_reward_function.path); `--data-source searchR1_hotpotqa`
selects verl's built-in exact-match scorer instead, which reads the same ground truth.
"""

from pathlib import Path
from typing import Iterator

import pyarrow as pa

import synth.rewards
from synth.schemas import Item
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.prompts import VERL_PROMPT, load_template, render
from synth.store.export.sink import check_output, write_rows
from synth.store.reader import iter_records

ABILITY = "fact-reasoning"
VERL_BUILTIN_QA_SOURCES = (
    "searchR1_nq", "searchR1_triviaqa", "searchR1_popqa", "searchR1_hotpotqa",
    "searchR1_2wikimultihopqa", "searchR1_musique", "searchR1_bamboogle",
)

AGENT_NAME = "tool_agent"
"""verl's agent loop for multi-turn tool use."""
AGENT_TOOLS = ("search", "open")
GROUND_TRUTH = pa.struct([("target", pa.list_(pa.string()))])
TOOL_KWARGS = pa.struct([("create_kwargs", pa.struct([
    ("ground_truth", GROUND_TRUTH),
    ("question", pa.string()),
    ("data_source", pa.string()),
]))])

EXTRA_INFO = pa.struct([
    ("split", pa.string()),
    ("index", pa.int64()),
    ("item_id", pa.string()),
    ("dataset", pa.string()),
    ("question", pa.string()),
    ("answer", pa.string()),
    ("hops", pa.int64()),
    ("difficulty", pa.string()),
    ("need_tools_kwargs", pa.bool_()),
    ("tools_kwargs", pa.struct([(tool, TOOL_KWARGS) for tool in AGENT_TOOLS])),
])

SCHEMA = pa.schema([
    ("data_source", pa.string()),
    ("prompt", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
    ("ability", pa.string()),
    ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", GROUND_TRUTH)])),
    ("extra_info", EXTRA_INFO),
    ("agent_name", pa.string()),
])


def default_data_source(request: ExportRequest) -> str:
    return request.data_source or f"synth_{request.version.recipe}"


def rl_row(item: Item, index: int, request: ExportRequest, template: str, data_source: str) -> dict:
    ground_truth = {"target": item.answers}
    create_kwargs = {"ground_truth": ground_truth, "question": item.question, "data_source": data_source}
    return {
        "data_source": data_source,
        "prompt": [{"role": "user", "content": render(template, item.question)}],
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": ground_truth},
        "extra_info": {
            "split": request.split,
            "index": index,
            "item_id": item.id,
            "dataset": request.version.ref,
            "question": item.question,
            "answer": item.answer,
            "hops": item.hops,
            "difficulty": item.difficulty,
            "need_tools_kwargs": True,
            "tools_kwargs": {tool: {"create_kwargs": create_kwargs} for tool in AGENT_TOOLS},
        },
        "agent_name": AGENT_NAME,
    }


def scorer_note(data_source: str) -> str:
    if data_source in VERL_BUILTIN_QA_SOURCES:
        return f"data_source={data_source}: verl scores it with its built-in search_r1_like_qa_em (exact match on <answer>)"
    return (
        f"data_source={data_source}: score it with synth's reward, i.e. pass to verl "
        f"custom_reward_function.path={Path(synth.rewards.__file__).resolve()} custom_reward_function.name=compute_score"
    )


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet", ".jsonl"))
    template = load_template(request.prompt_template, VERL_PROMPT)
    data_source = default_data_source(request)

    def rows() -> Iterator[dict]:
        items = iter_records(request.settings, request.version, "items", request.where)
        for index, item in enumerate(items):
            yield rl_row(item, index, request, template, data_source)

    count = write_rows(rows(), SCHEMA, request.out)
    return ExportResult(request.out, count, [scorer_note(data_source)])

"""Search-R1 training Parquet: the verl row plus Search-R1's `id`, `question` and `golden_answers`,
with a prompt that teaches its tag protocol (<think>, <search>, <information>, <answer>).

Search-R1's trainer renders retrieved passages itself (`Doc i(Title: "T") text`), so this is the
`searchr1` contract's RL side, and the SFT data that goes with it is `--format searchr1-sft` (same
prompt, same observations). Search-R1 maps `data_source` to a scorer by a fixed list (nq, triviaqa,
popqa, hotpotqa, 2wikimultihopqa, musique, bamboogle, all exact match on <answer>); the default is
"hotpotqa", the multi-hop entry, so the export trains without code changes; the true origin is in
`extra_info.dataset`. Its scorer needs exactly one <answer> example in the prompt (see `prompts`).
"""

from collections.abc import Iterator

import pyarrow as pa

from synth.contract.matching import plain_variants
from synth.errors import ConfigError
from synth.store.export import verl
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.prompts import SEARCH_R1_PROMPT, load_template, render, search_r1_answer_tag_warning
from synth.store.export.sink import check_output, write_rows
from synth.store.export.worlds import export_worlds
from synth.store.reader import iter_records

SEARCH_R1_SOURCES = ("nq", "triviaqa", "popqa", "hotpotqa", "2wikimultihopqa", "musique", "bamboogle")
DEFAULT_DATA_SOURCE = "hotpotqa"
TOOLS = ["search"]

SCHEMA = pa.schema(
    [("id", pa.string()), ("question", pa.string()), ("golden_answers", pa.list_(pa.string()))]
    + list(zip(verl.schema(TOOLS).names, verl.schema(TOOLS).types))
)


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet",), why="Search-R1's trainer reads Parquet")
    if request.contract not in (None, "searchr1"):
        raise ConfigError(
            f"--format searchr1 is Search-R1's own protocol (its trainer renders search results itself); "
            f"drop --contract {request.contract}, or use --format verl for that contract"
        )
    worlds = {world.name for world in export_worlds(request, request.world_urls).values()}
    if worlds:
        raise ConfigError(
            f"{request.version.ref} mixes {len(worlds)} worlds ({', '.join(sorted(worlds))}) and Search-R1's trainer "
            "searches one retriever: export --format verl (each row searches its own world), or mix one world"
        )
    template = load_template(request.prompt_template, SEARCH_R1_PROMPT)
    data_source = request.data_source or DEFAULT_DATA_SOURCE

    def rows() -> Iterator[dict]:
        items = iter_records(request.settings, request.version, "items", request.predicate())
        for index, item in enumerate(items):
            prompt = [{"role": "user", "content": render(template, item.question)}]
            row = verl.rl_row(item, index, request, prompt, data_source, TOOLS)
            yield {"id": item.id, "question": item.question, "golden_answers": plain_variants(item.answers), **row}

    count = write_rows(rows(), SCHEMA, request.out, lambda: verl.no_items(request))
    if data_source in SEARCH_R1_SOURCES:
        notes = [f"data_source={data_source}: Search-R1's trainer scores it with qa_em (exact match on <answer>)"]
    else:
        notes = [
            f"data_source={data_source} is not in Search-R1's scorer list {list(SEARCH_R1_SOURCES)}: "
            "add it to _select_rm_score_fn or training will stop with NotImplementedError"
        ]
    warning = search_r1_answer_tag_warning(template)
    notes += [warning] if warning else []
    notes.append(
        "SFT data for it: synth export NAME --format searchr1-sft (same prompt and observations); "
        "retriever: synth search serve (Search-R1's retriever.url = http://HOST:PORT/retrieve)"
    )
    return ExportResult(request.out, count, notes)

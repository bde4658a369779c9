"""verl RL data, ready to run: the Parquet rows, plus the tools and the reward beside them.

    {"data_source": str, "prompt": [{"role": "system", ...}, {"role": "user", ...}], "ability": str,
     "reward_model": {"style": "rule", "ground_truth": {"target": [str, ...]}},
     "extra_info": {"split": str, "index": int, ..., "need_tools_kwargs": true, "tools_kwargs": {...}},
     "agent_name": "tool_agent"}

The prompt is the agent contract's system prompt and question, the same the SFT exports show.
`agent_name` selects verl's tool agent loop, and `extra_info.tools_kwargs` hands each tool its
per-row `create_kwargs`. Next to the Parquet the export writes:

- `tool_config.yaml`: the contract's tools as verl `BaseTool`s (`synth_verl_tools.SearchTool`, ...)
  with the contract's schemas, the search top-k the data was made with, and the observation style;
- `synth_verl_tools.py`: those tools, calling `synth search serve` (/retrieve, /open);
- `synth_contract.py`: the rendering they share with synth's agents, and `compute_score`, which
  scores a final `<answer>` tag or `answer` call (verl's custom reward function);
- `synth_trl_grpo.py`: the same tools and reward for TRL's GRPOTrainer, runnable as it is;
- with a teacher's context policy (synth.store.export.verl_context): `synth_verl_agent_loop.py` and
  `agent_loop.yaml`, the verl agent loop that applies it, which the rows' `agent_name` selects;
- `<out>-val.parquet`: the validation split's items (`synth.splits`, by item id); the file itself
  holds the train split's (`--split`), and test items stay out for `synth eval`.

verl picks the reward by `data_source`; its `default_compute_score` knows no `synth_*` source, so the
printed overrides point the custom reward function at `synth_contract.py`, under the key of the verl
release that will run them (`verl_command`). With `--data-source
searchR1_hotpotqa` (or another `searchR1_*`) verl's built-in exact match scores `<answer>` tags
instead. The ground truth lists plain spellings of accented answers too, so that scorer, which
does not fold accents, accepts "Zoe Saldana" as synth's does. verl reads Parquet, and only Parquet
in every release, so that is the one file type written.
"""

import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlparse

import pyarrow as pa
import yaml

from synth.contract import AgentContract, get_contract, portable
from synth.contract.matching import plain_variants
from synth.errors import ConfigError, NotFoundError
from synth.schemas import Item
from synth.splits import split_of
from synth.store.export import verl_command, verl_context
from synth.store.export.options import ExportRequest, ExportResult
from synth.store.export.prompts import load_template, render
from synth.store.export.sink import check_output, write_rows
from synth.store.export.worlds import ExportWorld, export_worlds
from synth.store.reader import iter_records
from synth.store.version_world import retrieval_k

ABILITY = "fact-reasoning"
VERL_BUILTIN_QA_SOURCES = (
    "searchR1_nq",
    "searchR1_triviaqa",
    "searchR1_popqa",
    "searchR1_hotpotqa",
    "searchR1_2wikimultihopqa",
    "searchR1_musique",
    "searchR1_bamboogle",
)
AGENT_NAME = "tool_agent"
"""verl's agent loop for multi-turn tool use (an agent loop runs every verl rollout; it reads this column)."""
TOOL_CLASSES = {"search": "SearchTool", "open": "OpenTool", "answer": "AnswerTool"}
TOOLS_MODULE = "synth_verl_tools"
CONTRACT_MODULE = "synth_contract"
TRL_SCRIPT = "synth_trl_grpo"
"""TRL's GRPOTrainer on the same files: the tools as functions, the reward in TRL's signature."""
TOOL_CONFIG = "tool_config.yaml"
WORLDS_FILE = "synth_worlds.yaml"
MAX_TOOL_RESPONSE_CHARS = 8192
"""verl cuts tool results at 256 characters by default; SFT showed them whole."""

GROUND_TRUTH = pa.struct([("target", pa.list_(pa.string()))])
_CREATE_FIELDS = [("ground_truth", GROUND_TRUTH), ("question", pa.string()), ("data_source", pa.string())]


def create_kwargs_type(routed: bool) -> pa.DataType:
    """A tool's per-row `create_kwargs`; `routed`: with the URL of the row's world (a mixture of worlds)."""
    return pa.struct(
        [("create_kwargs", pa.struct(_CREATE_FIELDS + ([("retrieval_service_url", pa.string())] if routed else [])))]
    )


PROMPT = pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))


def extra_info_type(tool_names: list[str], routed: bool = False) -> pa.DataType:
    return pa.struct(
        [
            ("split", pa.string()),
            ("index", pa.int64()),
            ("item_id", pa.string()),
            ("dataset", pa.string()),
            ("question", pa.string()),
            ("answer", pa.string()),
            ("hops", pa.int64()),
            ("difficulty", pa.string()),
            ("need_tools_kwargs", pa.bool_()),
            ("tools_kwargs", pa.struct([(tool, create_kwargs_type(routed)) for tool in tool_names])),
            *([("world", pa.string())] if routed else []),
        ]
    )


def schema(tool_names: list[str], routed: bool = False) -> pa.Schema:
    """The rows' schema; `routed` (a mixture of worlds): each tool's create_kwargs carries the row's world
    URL, extra_info its `world`, and an `environment` column names it for TRL's multi-environment mode."""
    return pa.schema(
        [
            ("data_source", pa.string()),
            ("prompt", PROMPT),
            ("ability", pa.string()),
            ("reward_model", pa.struct([("style", pa.string()), ("ground_truth", GROUND_TRUTH)])),
            ("extra_info", extra_info_type(tool_names, routed)),
            ("agent_name", pa.string()),
            *([("environment", pa.string())] if routed else []),
        ]
    )


def default_data_source(request: ExportRequest) -> str:
    return request.data_source or f"synth_{request.version.recipe}"


def rl_row(
    item: Item,
    index: int,
    request: ExportRequest,
    prompt: list[dict],
    data_source: str,
    tool_names: list[str],
    split: str | None = None,
    world: ExportWorld | None = None,
    agent_name: str = AGENT_NAME,
) -> dict:
    """One RL row; `world`: the row's own world in a mixture of several (its URL reaches its tools)."""
    ground_truth = {"target": plain_variants(item.answers)}
    create_kwargs = {"ground_truth": ground_truth, "question": item.question, "data_source": data_source}
    if world is not None:
        create_kwargs["retrieval_service_url"] = world.url
    row = {
        "data_source": data_source,
        "prompt": prompt,
        "ability": ABILITY,
        "reward_model": {"style": "rule", "ground_truth": ground_truth},
        "extra_info": {
            "split": split or split_of(item.id, request.fractions),
            "index": index,
            "item_id": item.id,
            "dataset": request.version.ref,
            "question": item.question,
            "answer": item.answer,
            "hops": item.hops,
            "difficulty": item.difficulty,
            "need_tools_kwargs": True,
            "tools_kwargs": {tool: {"create_kwargs": create_kwargs} for tool in tool_names},
        },
        "agent_name": agent_name,
    }
    if world is not None:
        row["extra_info"]["world"] = world.name
        row["environment"] = world.name
    return row


def search_k(request: ExportRequest) -> int:
    """Passages per search when the data was made, so RL searches alike (synth.store.export.worlds)."""
    return retrieval_k(request.version.config)


def made_under(request: ExportRequest) -> str:
    """The agent contract the version's agents ran under (top-level `contract` in versions made before
    the `world` section)."""
    config = request.version.config
    return (config.get("world") or {}).get("contract") or config.get("contract") or "synth"


def tool_config(contract: AgentContract, request: ExportRequest) -> dict:
    tools = []
    for schema_ in contract.schemas:
        name = schema_["function"]["name"]
        config: dict[str, object] = {"type": "native"}
        if name != "answer":
            config.update(retrieval_service_url=request.retrieval_url, timeout=30)
        if name == "search":
            config.update(topk=search_k(request), observation=contract.observation)
        tools.append({"class_name": f"{TOOLS_MODULE}.{TOOL_CLASSES[name]}", "config": config, "tool_schema": schema_})
    return {"tools": tools}


def helper_files(contract: AgentContract, request: ExportRequest) -> dict[str, str]:
    """The files that travel with the Parquet, by name."""
    here = Path(portable.__file__).parent
    header = (
        f"# verl tool config written by `synth export --format verl` (agent contract: {contract.name}).\n"
        "# Start the retriever first: synth search serve (with the --kg/--corpus the data was made from).\n"
    )
    return {
        TOOL_CONFIG: header
        + yaml.safe_dump(tool_config(contract, request), sort_keys=False, allow_unicode=True, width=1000),
        f"{TOOLS_MODULE}.py": (here / "verl_tools.py").read_text(encoding="utf-8"),
        f"{CONTRACT_MODULE}.py": (here / "portable.py").read_text(encoding="utf-8"),
        f"{TRL_SCRIPT}.py": (here / "trl_grpo.py").read_text(encoding="utf-8"),
    }


def write_helpers(files: dict[str, str], folder: Path, force: bool) -> None:
    """Write the helper files beside the data; another export's different files are not overwritten silently."""
    for name, text in files.items():
        path = folder / name
        if path.exists() and not force and path.read_text(encoding="utf-8") != text:
            raise ConfigError(
                f"{path} exists with other content (another export's?); export to another folder or pass --force"
            )
    for name, text in files.items():
        temporary = folder / f".{name}.tmp"
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, folder / name)


def run_notes(
    request: ExportRequest,
    contract: AgentContract,
    data_source: str,
    val_name: str,
    counts: tuple[int, int],
    context: verl_context.ExportContext,
    worlds: dict[str, ExportWorld] | None = None,
) -> list[str]:
    """The export's notes and train commands; `context`: the teacher's policy the rows run under."""
    folder = request.out.parent.resolve()
    version = verl_command.verl_version(request.verl_version)
    custom = data_source not in VERL_BUILTIN_QA_SOURCES
    policy = context.policy != "none"
    overrides = verl_command.overrides(
        version,
        (request.out.name, val_name, TOOL_CONFIG),
        counts[0],
        MAX_TOOL_RESPONSE_CHARS,
        context.max_turns,  # RL rollouts get as many turns as the teacher's had
        contract.max_parallel_calls,
        f"{CONTRACT_MODULE}.py" if custom else None,
        keep_order=curriculum(request),
        agent_loop_config=verl_context.LOOP_CONFIG if policy else None,
        lengths=verl_context.sequence_lengths(context),
    )
    if not custom:
        scorer = (
            f"data_source={data_source}: verl scores it with its built-in search_r1_like_qa_em "
            "(exact match on the last <answer> tag; no accent folding, no answer calls)"
        )
    else:
        scorer = (
            f"data_source={data_source}: scored by compute_score in {CONTRACT_MODULE}.py, set as "
            f"{verl_command.reward_prefix(version)} (the key verl {version}'s trainer hands to its reward loader; "
            "verl's default scorer does not know this source and would raise NotImplementedError)"
        )
    train, val = counts
    loop = f", {verl_context.LOOP_CONFIG}, {verl_context.LOOP_MODULE}.py" if policy else ""
    return [
        f"wrote {TOOL_CONFIG}, {TOOLS_MODULE}.py{loop}, {CONTRACT_MODULE}.py and {TRL_SCRIPT}.py beside the data; keep "
        "them together",
        (
            f"held-out splits by item id: {train} {request.split} items in {request.out.name}, {val} validation items "
            f"in {val_name} (data.val_files; test items stay out for synth eval)"
            if val
            else f"no validation item ({request.selection()}, validation fraction "
            f"{request.fractions.validation:g}): {val_name} repeats the {request.out.name} items, so verl validates "
            "on them; raise --validation-fraction (SYNTH_VALIDATION_FRACTION) or make more items"
        ),
        scorer,
        *verl_context.note(context),
        *(
            [
                f"the rows search {len({w.name for w in worlds.values()})} worlds, each row its own (extra_info.world, "
                "its tools' create_kwargs.retrieval_service_url; the `environment` column for TRL); start each: "
                + "; ".join(sorted({f"{w.name}: {w.serve}" for w in worlds.values()}))
            ]
            if worlds
            else [
                f"start the retriever: synth search serve --port {urlparse(request.retrieval_url).port or 80} "
                "(same --kg/--corpus as the data)"
            ]
        ),
        f"the train command below uses verl {version}'s config keys (another release: --verl-version) and a GRPO "
        "baseline for one GPU (append overrides to scale it); set MODEL to the model to train (a Hugging Face id or "
        "folder)",
        f"multi_turn.max_parallel_calls={contract.max_parallel_calls}: the contract's most calls per turn, kept by "
        "synth's agents, so RL runs every call the SFT rows teach (verl's default runs a turn's first call only)",
        *(
            [
                "the items are a curriculum (synth mix --order easy-to-hard), stored in training order: the command "
                "sets data.shuffle=false so verl reads them in that order"
            ]
            if curriculum(request)
            else []
        ),
        "verl reserves up to 10 CPUs per GPU in Ray (RayResourcePool's max_colocate_count): on a machine with fewer "
        "cores main_ppo waits at Ray start and prints nothing; append ray_kwargs.ray_init.num_cpus=10 to let Ray "
        "schedule it there",
        f"train: cd {folder} && MODEL=${{MODEL:?set MODEL to the model to train}} PYTHONPATH=$PWD "
        "python3 -m verl.trainer.main_ppo " + " ".join(overrides),
        f"or with TRL's GRPOTrainer (trl >= 1.16: the world as its environment_factory class; --tools functions for "
        f"trl >= 1.0; any GRPOConfig flag may follow): cd {folder} && python3 "
        f"{TRL_SCRIPT}.py --model_name_or_path ${{MODEL:?set MODEL to the model to train}} --output_dir grpo",
    ]


def curriculum(request: ExportRequest) -> bool:
    """Whether the version's items are stored in a training order (a `synth mix` curriculum) that verl must keep."""
    return ((request.version.config or {}).get("mix") or {}).get("order") == "easy-to-hard"


def val_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}-val{out.suffix}")


def export(request: ExportRequest) -> ExportResult:
    check_output(request.out, request.force, (".parquet",), why="verl reads Parquet")
    url = urlparse(request.retrieval_url)
    if url.scheme not in ("http", "https") or not url.netloc:
        raise ConfigError(
            f"--retrieval-url {request.retrieval_url!r} is not an http(s) URL; give where synth search serve listens, "
            "e.g. http://127.0.0.1:8000"
        )
    contract = get_contract(request.contract or made_under(request))
    # what the version's agents ran under, unless the user asked for another
    template = load_template(request.prompt_template, None)
    data_source = default_data_source(request)
    tool_names = [tool["function"]["name"] for tool in contract.schemas]

    def prompt(question: str) -> list[dict]:
        user = render(template, question) if template else contract.user_prompt(question)
        return [{"role": "system", "content": contract.system_prompt}, {"role": "user", "content": user}]

    train_items = list(iter_records(request.settings, request.version, "items", request.predicate()))
    if not train_items:
        no_items(request)
    validation = replace(request, split="validation")
    val_items = (
        []
        if request.split == "all"
        else list(iter_records(request.settings, request.version, "items", validation.predicate()))
    )

    worlds = export_worlds(request, request.world_urls)  # a mixture of worlds: each row searches its own
    context = verl_context.teacher_context(request.version.config)  # the teacher's policy, applied in RL too
    verl_context.check_release(context, verl_command.verl_version(request.verl_version))
    agent_name = verl_context.AGENT_NAME if context.policy != "none" else AGENT_NAME

    def rows(chosen: list[Item], split: str | None) -> Iterator[dict]:
        for index, item in enumerate(chosen):
            world = worlds[item.metadata["mix"]["source"]] if worlds else None
            yield rl_row(item, index, request, prompt(item.question), data_source, tool_names, split, world, agent_name)

    val_out = val_path(request.out)
    check_output(val_out, request.force, (".parquet",), why="verl reads Parquet")
    table = schema(tool_names, routed=bool(worlds))
    count = write_rows(rows(train_items, None), table, request.out, lambda: no_items(request))
    # no validation items (a small version, a validation fraction of 0, --split all): verl validates on the train file
    write_rows(rows(val_items or train_items, None), table, val_out)
    files = helper_files(contract, request) | verl_context.loop_files(context)
    if worlds:
        files[WORLDS_FILE] = worlds_file(worlds)
    write_helpers(files, request.out.parent, request.force)
    notes = run_notes(request, contract, data_source, val_out.name, (count, len(val_items)), context, worlds)
    return ExportResult(request.out, count, notes)


def worlds_file(worlds: dict[str, ExportWorld]) -> str:
    """The mixture's worlds for the TRL script (an environment per world): name -> url and serve command."""
    by_name = {world.name: {"url": world.url, "serve": world.serve} for world in worlds.values()}
    return "# the worlds of a synth mix export: each row's `environment` names one\n" + yaml.safe_dump(
        by_name, sort_keys=False, width=1000
    )


def no_items(request: ExportRequest) -> None:
    raise NotFoundError(
        f"{request.version.ref} has no items in {request.selection()}, so there is nothing to train on; nothing "
        "was written" + ("" if request.split == "all" else " (--split all exports every item)")
    )

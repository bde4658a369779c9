"""Check the agent loop a verl export runs under a context policy (synth_verl_agent_loop.py) with
verl's own code: a 120-turn search whose context would overflow without the policy, under
`archive` and under `summarize`, through verl's ToolAgentLoop machinery, its tool registry and the
exported tools against `synth search serve`, and the export's reward.

The model is scripted at the token level (verl's server manager's `generate`): each turn it searches
the next record, writes a note when a result holds the vault code, and in its last turns answers
from what its context still shows (the code, a summary that kept it, or its note, reopening that
document first). Asked to summarize, it keeps every fact and note it is shown. So the run ends with
the right answer only if the policy's views kept what was needed.

Two steps, in two environments (verl cannot live in synth's):

    python examples/check_verl_context_loop.py prepare /tmp/ctx            # synth's environment
    synth search serve --corpus /tmp/ctx/records.jsonl --port 8000 &       # the records' retriever
    /tmp/verl/bin/python examples/check_verl_context_loop.py check /tmp/ctx  # verl >= 0.9.1 alone

`prepare` publishes a one-item version per policy (its teacher's `distill.agent` says the policy),
exports each with `synth export --format verl` and writes SmolLM2's tokenizer with the Qwen3
training template TRL ships. `check` composes verl's config from each export's printed command and
fails at the first thing that does not hold: every request fits the context, the final answer is
right by the export's reward, every model turn is trained in exactly one segment, and the views are
the policy's (stubs, a summary).
"""

import argparse
import asyncio
import json
import re
import shlex
import sys
from pathlib import Path

TURNS = 120
CODE = "ORCHID-7"
CONTEXT_TOKENS = 16000
"""The teacher's context: the whole search takes about 110,000 tokens, its archived views about 13,000."""
FILLER = "This record lists shipments, dates and the names of clerks who signed for them in the harbour office."
POLICIES = ("none", "archive", "summarize")
"""none: the control, verl's own tool agent, which must not reach the answer."""


def fail(message: str) -> None:
    print(f"FAIL: {message}")
    sys.exit(1)


def prepare(out: Path) -> None:
    """(synth's environment) the corpus, one version and one verl export per policy, the tokenizer."""
    import importlib.util
    import os

    out.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("SYNTH_HOME", str(out / "home"))
    from synth.llm.embedded import smollm2_tokenizer
    from synth.schemas import Item, Provenance
    from synth.settings import Settings
    from synth.store.export import export_version
    from synth.store.publish import VersionSpec, publish_version

    with (out / "records.jsonl").open("w") as corpus:
        for turn in range(TURNS):
            text = f"Record r{turn}. " + " ".join([FILLER] * 8) + (f" The vault code is {CODE}." if turn == 3 else "")
            corpus.write(json.dumps({"id": f"d{turn}", "contents": f'"Record r{turn}"\n{text}'}) + "\n")
    settings = Settings()
    provenance = Provenance(generator="check_verl_context_loop", seed=0, kg_snapshot="records")
    item = Item(
        id="vault", question="What is the vault code?", answer=CODE, recipe="multihop", hops=1, provenance=provenance
    )
    for policy in POLICIES:
        agent = {
            "context": policy,
            "max_turns": TURNS,
            "context_tokens": CONTEXT_TOKENS,
            "summarize_at": CONTEXT_TOKENS // 2,
        }
        config = {"distill": {"agent": agent}, "world": {"retrieval_k": 1}}
        publish_version(
            settings, VersionSpec(name=f"long-{policy}", recipe="multihop", config=config), {"items": [item]}
        )
        folder = out / policy
        folder.mkdir(exist_ok=True)
        result = export_version(settings, f"long-{policy}", "verl", folder / "train.parquet", split="all", force=True)
        (folder / "export.txt").write_text("\n".join(result.notes) + "\n")
    tokenizer = smollm2_tokenizer(out / "models")
    template = Path(importlib.util.find_spec("trl").origin).parent / "chat_templates" / "qwen3_training.jinja"
    tokenizer.chat_template = template.read_text()
    tokenizer.save_pretrained(out / "tokenizer")
    print(f"prepared {out}: records.jsonl, {', '.join(POLICIES)} exports, tokenizer")


class ScriptedModel:
    """verl's server manager, answering each `generate` as the long-search agent would."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.turn = 0
        self.summaries = 0
        self.prompts: list[int] = []  # each agent request's prompt tokens

    async def generate(self, request_id, *, prompt_ids, sampling_params, **kwargs):
        from verl.workers.rollout.replica import TokenOutput

        shown = self.tokenizer.decode(prompt_ids)
        if "You keep the notes of a research assistant" in shown:
            self.summaries += 1
            work = shown.split("<|im_start|>user", 1)[1]
            facts = sorted(set(re.findall(rf"The vault code is {re.escape(CODE)}\.", work)))
            notes = sorted(set(re.findall(r"The vault code is in document (\S+?)\.", work)))
            text = " ".join(facts + [f"The vault code is in document {doc}." for doc in notes]) or "Nothing yet."
            return TokenOutput(token_ids=self._ids(text + "<|im_end|>"))
        self.prompts.append(len(prompt_ids))
        turn, self.turn = self.turn, self.turn + 1
        if turn >= TURNS - 2:
            if f"The vault code is {CODE}." in shown:
                return TokenOutput(token_ids=self._ids(f"<answer>{CODE}</answer><|im_end|>"))
            note = re.search(r"The vault code is in document (\S+?)\.", shown)
            if note:
                return TokenOutput(token_ids=self._ids(self._call("Reopening my note.", "open", {"doc_id": note[1]})))
            return TokenOutput(token_ids=self._ids("<answer>unknown</answer><|im_end|>"))
        said = f"Checking record r{turn}."
        last = shown.rsplit("<tool_response>", 1)[-1] if "<tool_response>" in shown else ""
        if f"The vault code is {CODE}." in last:
            doc = re.search(r"\[id: (\S+?)\]", last)
            said = f"The vault code is in document {doc[1]}." if doc else said
        return TokenOutput(token_ids=self._ids(self._call(said, "search", {"query": f"record r{turn}"})))

    @staticmethod
    def _call(content: str, name: str, arguments: dict) -> str:
        call = json.dumps({"name": name, "arguments": arguments})
        return f"{content}\n<tool_call>\n{call}\n</tool_call><|im_end|>"

    def _ids(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)


def printed_overrides(folder: Path) -> list[str]:
    command = next(line for line in (folder / "export.txt").read_text().splitlines() if line.startswith("train: "))
    words = shlex.split(command.removeprefix("train: "))
    return [
        word.replace("$PWD", str(folder)).replace("$MODEL", str(folder.parent / "tokenizer"))
        for word in words[words.index("verl.trainer.main_ppo") + 1 :]
    ]


async def run_policy(folder: Path, policy: str) -> None:
    import hydra
    from hydra import compose, initialize_config_module
    from omegaconf import OmegaConf
    from transformers import AutoTokenizer
    from verl.experimental.agent_loop.agent_loop import DictConfigWrap, ToolListWrap
    from verl.tools.tool_registry import initialize_tools_from_config
    from verl.trainer.ppo.utils import create_rl_dataset
    from verl.utils.dataset.rl_dataset import RLHFDataset

    with initialize_config_module(config_module="verl.trainer.config", version_base=None):
        config = compose(config_name="ppo_trainer", overrides=printed_overrides(folder))
    tokenizer = AutoTokenizer.from_pretrained(folder.parent / "tokenizer")
    dataset = create_rl_dataset(config.data.train_files, config.data, tokenizer, None, is_train=True)
    row = dataset[0]
    if policy == "none":
        import verl.experimental.agent_loop.tool_agent_loop  # noqa: F401  (registers tool_agent)
        from verl.experimental.agent_loop.agent_loop import _agent_loop_registry

        loop_config = OmegaConf.create(_agent_loop_registry[row["agent_name"]])
    else:
        [loop_config] = OmegaConf.load(config.actor_rollout_ref.rollout.agent.agent_loop_config_path)
    if row["agent_name"] != loop_config.get("name", "tool_agent"):
        fail(f"the row runs agent loop {row['agent_name']!r}, the export's config names {loop_config.name!r}")
    tools = initialize_tools_from_config(config.actor_rollout_ref.rollout.multi_turn.tool_config_path)
    model = ScriptedModel(tokenizer)
    loop = hydra.utils.instantiate(
        config=loop_config,
        trainer_config=DictConfigWrap(config=config),
        server_manager=model,
        tokenizer=tokenizer,
        processor=None,
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap(tools),
    )
    kwargs = {key: value for key, value in row.items() if key not in ("input_ids", "attention_mask", "position_ids")}
    outputs = await loop.run({"temperature": 1.0, "top_p": 1.0, "top_k": -1, "logprobs": False}, **kwargs)
    outputs = outputs if isinstance(outputs, list) else [outputs]
    report(policy, config, tokenizer, model, loop, outputs, row)


def report(policy, config, tokenizer, model, loop, outputs, row) -> None:
    import synth_contract

    longest = max(len(output.prompt_ids) + len(output.response_ids) for output in outputs)
    turns = sum(_runs(output.response_mask) for output in outputs)
    final = tokenizer.decode(outputs[-1].response_ids)
    score = synth_contract.compute_score(row["data_source"], final, row["reward_model"]["ground_truth"])
    everything = sum(model.prompts) and max(model.prompts)
    print(
        f"{policy}: {len(outputs)} segments, {model.turn} model turns ({turns} trained), {model.summaries} summaries, "
        f"longest request {everything} tokens, longest segment {longest} tokens, final answer score {score}"
    )
    if policy == "none":  # the control: the whole history does not fit, so verl cuts the rollout short
        if score != 0.0 or model.turn >= TURNS:
            fail(f"none: verl's own tool agent went {model.turn} turns and scored {score}; the check proves nothing")
        return
    if score != 1.0:
        fail(f"{policy}: the run did not end with the right answer: {final[-200:]!r}")
    if turns != model.turn:
        fail(f"{policy}: {model.turn} model turns, {turns} trained across the segments (each once expected)")
    if max(model.prompts) >= min(CONTEXT_TOKENS, config.data.max_prompt_length):  # (verl cuts a longer one there)
        fail(f"{policy}: a request ({max(model.prompts)} tokens) outgrew the teacher's {CONTEXT_TOKENS}-token context")
    for number, output in enumerate(outputs):  # what verl's V1 worker turns each output into, a row apiece
        row_fields = output.as_dict()
        if len(output.response_ids) > config.data.max_response_length or len(row_fields["response_mask"]) != len(
            output.response_ids
        ):
            fail(f"{policy}: segment {number} does not fit verl's response length, or its mask is not its length")
    shown = [tokenizer.decode(output.prompt_ids) for output in outputs]
    if policy == "archive" and not any("[archived result: documents" in text for text in shown[1:]):
        fail("archive: no later segment shows an archived result's stub")
    if policy == "summarize" and not any(synth_contract.SUMMARY_LEAD.strip() in text for text in shown[1:]):
        fail("summarize: no later segment starts from a summary")
    calls = [m for m in loop.trace if m["role"] == "assistant"]
    results = [m for m in loop.trace if m["role"] == "tool"]
    if len(calls) != model.turn or len(results) != model.turn - 1 or any("[archived" in m["content"] for m in results):
        fail(f"{policy}: the loop's trace is not the whole run ({len(calls)} turns, {len(results)} results, in full)")


def _runs(mask: list[int]) -> int:
    """How many model turns a response mask holds (runs of 1s)."""
    return sum(1 for index, value in enumerate(mask) if value and (index == 0 or not mask[index - 1]))


def check(out: Path) -> None:
    for policy in POLICIES:
        sys.path.insert(0, str(out / policy))  # what PYTHONPATH=$PWD does for the printed command
        asyncio.run(run_policy(out / policy, policy))
        for name in ("synth_contract", "synth_verl_tools", "synth_verl_agent_loop"):
            sys.modules.pop(name, None)
        sys.path.pop(0)
    print("OK: verl runs the context policies through the exported agent loop")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("step", choices=["prepare", "check"])
    parser.add_argument("folder", type=Path)
    args = parser.parse_args()
    (prepare if args.step == "prepare" else check)(args.folder.resolve())


if __name__ == "__main__":
    main()

"""`synth export`: write one published version in a trainer's format."""

from pathlib import Path

import click

from synth.cli.options import json_option, load_settings
from synth.contract.contracts import CONTRACTS  # plain data, cheap to import
from synth.export_formats import EXPORT_FORMATS  # plain data, cheap to import
from synth.splits import CHOICES


class _FormatChoice(click.Choice):
    """The formats of the table as it is when the command runs (a format registered after import counts)."""

    def __init__(self):
        super().__init__(list(EXPORT_FORMATS))

    def convert(self, value, param, ctx):
        self.choices = tuple(EXPORT_FORMATS)
        return super().convert(value, param, ctx)


class _ExportCommand(click.Command):
    def format_epilog(self, ctx, formatter):
        """The formats, from the table (synth.export_formats)."""
        with formatter.section("Formats"):
            formatter.write_dl([(entry.name, entry.description) for entry in EXPORT_FORMATS.values()])


@click.command(cls=_ExportCommand)
@click.argument("ref", metavar="NAME[@VERSION]")
@click.option("--format", "fmt", type=_FormatChoice(), required=True, help="Output format (listed below).")
@click.option(
    "--out", type=click.Path(path_type=Path), required=True, help="Output file (.parquet/.jsonl) or folder (hf)."
)
@click.option(
    "--split",
    type=click.Choice(list(CHOICES)),
    default="train",
    show_default=True,
    help="The held-out split to export, assigned by item id (stable across versions): train for training, "
    "validation, test (what synth eval scores), or all.",
)
@click.option("--where", help="SQL filter on the exported table, e.g. \"difficulty in ('medium','hard')\".")
@click.option("--data-source", help="Override data_source in verl/searchr1 rows (it selects the trainer's scorer).")
@click.option(
    "--prompt-template",
    type=click.Path(path_type=Path),
    help="Prompt file with a {question} placeholder: the question turn of every format (the same file for SFT and "
    "RL keeps them alike).",
)
@click.option(
    "--role",
    type=click.Choice(["teacher", "proposer"]),
    default="teacher",
    show_default=True,
    help="sft/sft-chatml/sharegpt: teacher rollouts, or self-play proposals whose question passed every gate.",
)
@click.option(
    "--contract",
    type=click.Choice(list(CONTRACTS)),
    help="Agent contract (tools, observations, finishing) to render under; default: each trajectory's own "
    "(synth), searchr1 for the Search-R1 formats. The same choice gives the same conversation in every format.",
)
@click.option(
    "--arguments",
    type=click.Choice(["object", "string"]),
    default="object",
    show_default=True,
    help="Tool-call arguments as JSON objects (what chat templates encode once) or as JSON strings.",
)
@click.option(
    "--keep-malformed",
    is_flag=True,
    help="Trajectory formats: also write trajectories with a tool call whose arguments are no JSON object (left out "
    "and counted by default: a trainer would learn the broken call).",
)
@click.option(
    "--allow-dropping-calls",
    is_flag=True,
    help="Trajectory formats: write the rows even if not one tool call of the trajectories comes out (refused by "
    "default: a tool-use dataset without its calls teaches plain answering).",
)
@click.option(
    "--procedural",
    type=click.Choice(["include", "exclude", "only"]),
    default="include",
    show_default=True,
    help="Trajectory formats: the path teacher's model-free demonstrations (distill.teacher=path) written beside "
    "model teachers' trajectories, left out, or written alone.",
)
@click.option(
    "--reasoning",
    type=click.Choice(["keep-all", "keep-last", "drop", "keep"]),
    default="keep-all",
    show_default=True,
    help="Trajectory formats: which assistant turns keep their reasoning (every turn, the last one only, or "
    "none; keep is keep-all), written as each consumer reads it (sft, dpo: reasoning_content, which TRL's "
    "Qwen3 and DeepSeek-R1 training templates render as <think>; sft-chatml, sharegpt, searchr1-sft: <think> "
    "blocks). The export's notes say which.",
)
@click.option(
    "--context",
    type=click.Choice(["full", "seen"]),
    default="full",
    show_default=True,
    help="Trajectory formats: each trajectory as it happened, or as its model saw it under agent.context "
    "summarize (a row per summary segment, as ReSum trains); archive runs are written full only.",
)
@click.option(
    "--validation-fraction",
    "--val-fraction",
    "validation_fraction",
    type=click.FloatRange(0, 1, max_open=True),
    help="Share of items in the validation split (default: SYNTH_VALIDATION_FRACTION, 0.05); verl writes them to "
    "OUT-val.parquet, which the printed command passes as data.val_files. Keep it fixed: it decides the splits.",
)
@click.option(
    "--test-fraction",
    type=click.FloatRange(0, 1, max_open=True),
    help="Share of items in the test split (default: SYNTH_TEST_FRACTION, 0.1). Keep it fixed: it decides the splits.",
)
@click.option(
    "--verl-version",
    help="verl: the release whose config keys the printed command uses (default: the installed verl, else the newest "
    "known, 0.9.1); verl 0.9 reads the reward from reward.custom_reward_function, older releases from "
    "custom_reward_function.",
)
@click.option(
    "--retrieval-url",
    default="http://127.0.0.1:8000",
    show_default=True,
    help="verl: where the exported tools reach `synth search serve`.",
)
@click.option(
    "--world-url",
    "world_url",
    multiple=True,
    metavar="NAME=URL",
    help="verl: where one world of a synth mix of several worlds is served (default: the ports after "
    "--retrieval-url, in the order the export's note lists them).",
)
@click.option(
    "--for-eval",
    "for_eval",
    metavar="EVAL_ID",
    help="Keep only items whose pass rate in this `synth eval` of the policy to train lies in --pass-band "
    "(synth evals list; an id prefix is enough).",
)
@click.option(
    "--for-model",
    "for_model",
    metavar="MODEL",
    help="Run `synth eval MODEL` on the exported split first (--eval-samples attempts per item; a rerun finds the "
    "stored eval and pays for nothing), then keep the items in --pass-band.",
)
@click.option(
    "--eval-samples",
    type=click.IntRange(min=2),
    default=4,
    show_default=True,
    help="With --for-model: attempts per item (pass rates need several).",
)
@click.option(
    "--pass-band",
    metavar="LOW:HIGH",
    help="With --for-eval: the pass rates kept, both ends included (default 0.1:0.9); items the policy always or never "
    "solves give GRPO no signal.",
)
@click.option("--force", is_flag=True, help="Replace --out (and the verl helper files) if they exist.")
@json_option
def export(
    ref,
    fmt,
    out,
    split,
    where,
    data_source,
    prompt_template,
    role,
    contract,
    arguments,
    keep_malformed,
    allow_dropping_calls,
    procedural,
    reasoning,
    context,
    validation_fraction,
    test_fraction,
    verl_version,
    retrieval_url,
    world_url,
    for_eval,
    for_model,
    eval_samples,
    pass_band,
    force,
    as_json,
) -> None:
    """Export dataset NAME (latest version) or NAME@VERSION to a training format (listed below)."""
    from synth.cli.render import print_json
    from synth.store.export import export_version

    if for_model is not None:
        for_eval = _eval_first(ref, for_model, for_eval, eval_samples, split, validation_fraction, test_fraction)
    result = export_version(
        load_settings(),
        ref,
        fmt,
        out,
        split=split,
        where=where,
        data_source=data_source,
        prompt_template=prompt_template,
        force=force,
        role=role,
        contract=contract,
        arguments=arguments,
        keep_malformed=keep_malformed,
        allow_dropping_calls=allow_dropping_calls,
        procedural=procedural,
        reasoning=reasoning,
        context=context,
        validation_fraction=validation_fraction,
        test_fraction=test_fraction,
        verl_version=verl_version,
        retrieval_url=retrieval_url,
        world_url=world_url,
        for_eval=for_eval,
        pass_band=pass_band,
    )
    if as_json:
        print_json({"path": str(result.path), "rows": result.rows, "notes": result.notes})
        return
    click.echo(f"wrote {result.rows} rows to {result.path}")
    for note in result.notes:
        click.echo(f"note: {note}")


def _eval_first(ref, model, for_eval, samples, split, validation_fraction, test_fraction) -> str:
    """--for-model: the id of `synth eval MODEL REF` on the exported split (run now, or found stored)."""
    from synth.errors import ConfigError
    from synth.evaluation.command import EvalRequest, evaluate
    from synth.run.flows_file import declared_models

    if for_eval is not None:
        raise ConfigError("give --for-eval EVAL_ID or --for-model MODEL, not both")
    request = EvalRequest(
        model=model,
        dataset=ref,
        split=split,
        k=samples,
        validation_fraction=validation_fraction,
        test_fraction=test_fraction,
    )
    outcome = evaluate(load_settings(), request, declared_models(None), log=lambda line: click.echo(line, err=True))
    click.echo(
        f"eval {outcome.run.id} of {model} ({'run now' if outcome.stored else 'found stored, nothing paid'}): "
        f"pass@1 {outcome.run.pass_at_1:.2f} over {outcome.run.items} items, k={samples}",
        err=True,
    )
    return outcome.run.id

"""`synth eval` (a model as a search agent on held-out items) and `synth evals list|show|compare`."""

from pathlib import Path

import click

from synth.cli.options import flows_file_option, json_option, load_settings
from synth.splits import CHOICES


@click.command("eval")
@click.argument("model")
@click.argument("dataset", required=False, metavar="[NAME[@VERSION]]")
@click.option(
    "--benchmark",
    type=click.Path(path_type=Path),
    help="Evaluate on an evaluation file instead (JSONL/JSON/CSV/Parquet with question and answers).",
)
@click.option(
    "--split",
    type=click.Choice(list(CHOICES)),
    default="test",
    show_default=True,
    help="The dataset's held-out split to evaluate on (by item id, as exports assign them).",
)
@click.option("--k", type=click.IntRange(min=1), default=1, show_default=True, help="Attempts per item (pass@k).")
@click.option("--limit", type=click.IntRange(min=1), help="Evaluate the first N items only.")
@click.option("--retriever", help="Search with bm25, dense, hybrid or a /retrieve URL; default: the data's.")
@click.option("--retrieval-k", type=click.IntRange(1, 20), help="Documents per search; default: the data's.")
@click.option("--contract", help="Agent contract (tools, observations, finishing); default: the data's.")
@click.option("--kg", help="Knowledge graph whose corpus a benchmark is searched in (default: the bundled one).")
@click.option("--corpus", help="A Search-R1 JSONL corpus to search instead of the graph's.")
@click.option("--max-turns", type=click.IntRange(min=1), help="Agent turns per attempt (default: by model size).")
@click.option("--turn-tokens", type=click.IntRange(min=1), help="Tokens per agent turn (default: by model size).")
@click.option("--temperature", type=click.FloatRange(min=0), help="Sampling temperature (default 0; 0.7 when k > 1).")
@click.option(
    "--protocol",
    type=click.Choice(["auto", "native", "tags", "json"]),
    help="How the agent calls tools (default auto: native where the model has a tool-call channel).",
)
@click.option(
    "--context",
    type=click.Choice(["none", "archive", "summarize"]),
    help="What a long search sees of itself, as panel.agent.context and distill.agent.context say (default none).",
)
@click.option("--context-tokens", type=click.IntRange(min=0), help="Context an attempt may fill (default: by model).")
@click.option(
    "--f1-threshold", type=click.FloatRange(0, 1), default=0.8, show_default=True, help="Token F1 that counts."
)
@click.option("--validation-fraction", type=click.FloatRange(0, 1, max_open=True), help="Split fraction (see export).")
@click.option("--test-fraction", type=click.FloatRange(0, 1, max_open=True), help="Split fraction (see export).")
@click.option("--max-tokens", type=click.IntRange(min=0), help="Stop, unstored, past this many tokens.")
@click.option("--max-cost", type=click.FloatRange(min=0), help="Stop before the estimated cost passes this many USD.")
@click.option(
    "--max-failure-rate",
    type=click.FloatRange(0, 1),
    default=0.1,
    show_default=True,
    help="Share of model calls that may fail before the eval stops unstored.",
)
@flows_file_option("The flows file whose `models:` section declares MODEL.")
@click.option("--quiet", is_flag=True, help="No progress lines.")
@json_option
def eval_command(model, dataset, benchmark, split, k, limit, **options) -> None:
    """Evaluate MODEL (a declared model or a checkpoint folder) as a search agent on the test split of
    dataset NAME[@VERSION] (or on --benchmark FILE), with the tools and contract the data was made with.

    Example: synth eval embedded multihop --k 4"""
    from synth.cli.render import print_json
    from synth.evaluation.command import EvalRequest, evaluate
    from synth.llm.accounting import Budget
    from synth.llm.gate import FailurePolicy
    from synth.run.flows_file import declared_models
    from synth.search.budget import AgentBudget

    world = {key: options[key] for key in ("retriever", "retrieval_k", "contract", "kg", "corpus") if options[key]}
    agent = AgentBudget(
        max_turns=options["max_turns"],
        turn_tokens=options["turn_tokens"],
        temperature=options["temperature"],
        protocol=options["protocol"],
        context=options["context"],
        context_tokens=options["context_tokens"],
    )
    request = EvalRequest(
        model=model,
        dataset=dataset,
        benchmark=benchmark,
        split=split,
        k=k,
        limit=limit,
        agent=agent,
        world=world,
        validation_fraction=options["validation_fraction"],
        test_fraction=options["test_fraction"],
        f1_threshold=options["f1_threshold"],
        budget=Budget(max_tokens=options["max_tokens"], max_cost_usd=options["max_cost"]),
        failures=FailurePolicy(max_rate=options["max_failure_rate"]),
    )
    log = (lambda line: None) if options["quiet"] or options["as_json"] else (lambda line: click.echo(line, err=True))
    outcome = evaluate(load_settings(), request, declared_models(options["flows_file"]), log=log)
    if options["as_json"]:
        print_json({"run": outcome.run.model_dump(mode="json"), "stored": outcome.stored, "llm": outcome.llm})
        return
    from synth.cli.eval_render import print_run

    print_run(outcome.run)
    calls = outcome.llm
    click.echo(
        f"{'stored' if outcome.stored else 'already stored'} as {outcome.run.id}; model calls: "
        f"{calls.get('llm_requests', 0)} ({calls.get('llm_cache_hits', 0)} from the cache); "
        f'show: synth evals show {outcome.run.id}    sql: synth sql "select * from eval_attempts where eval_id = '
        f"'{outcome.run.id}'\""
    )


@click.group()
def evals() -> None:
    """Browse `synth eval` runs: list them, show one, compare several side by side."""


@evals.command("list")
@json_option
def list_evals(as_json: bool) -> None:
    """Every stored eval, newest first."""
    from synth.cli.render import print_json, print_table
    from synth.store.evals import list_runs

    found = list_runs(load_settings())
    if as_json:
        print_json([run.model_dump(mode="json") for run in found])
        return
    if not found:
        click.echo("no evals yet; `synth eval embedded NAME` makes one")
        return
    print_table(
        ["eval", "created", "model", "source", "split", "items", "k", "pass@1", "ci95", "pass@k"],
        [
            (
                run.id,
                run.created_at.strftime("%Y-%m-%d %H:%M"),
                run.model,
                run.source,
                run.split,
                run.items,
                run.k,
                f"{run.pass_at_1:.3f}",
                f"{run.ci95_low:.3f}-{run.ci95_high:.3f}",
                f"{run.pass_at_k:.3f}",
            )
            for run in found
        ],
    )


@evals.command("show")
@click.argument("eval_id")
@json_option
def show_eval(eval_id: str, as_json: bool) -> None:
    """One eval (EVAL_ID or a prefix): accuracy overall and by hops, label, relation family and style."""
    from synth.cli.eval_render import print_run
    from synth.cli.render import print_json
    from synth.store.evals import load_run

    run = load_run(load_settings(), eval_id)
    if as_json:
        print_json(run.model_dump(mode="json"))
        return
    print_run(run)


@evals.command("compare")
@click.argument("eval_ids", nargs=-1, required=True)
@json_option
def compare_evals(eval_ids: tuple[str, ...], as_json: bool) -> None:
    """Several evals side by side (models or checkpoints on the same items), one column each."""
    from synth.cli.render import print_json, print_table
    from synth.evaluation.comparison import comparison
    from synth.store.evals import load_run

    settings = load_settings()
    runs = [load_run(settings, eval_id) for eval_id in eval_ids]
    columns, rows = comparison(runs)
    if as_json:
        print_json([dict(zip(columns, row)) for row in rows])
        return
    print_table(columns, rows)

"""How one eval run prints: its figures and its breakdowns as tables."""

import click

from synth.cli.render import print_table
from synth.evaluation.comparison import BREAKDOWNS
from synth.schemas import EvalRun


def print_run(run: EvalRun) -> None:
    summary = run.summary
    click.echo(
        f"{run.model} on {run.source} ({run.split}, {run.items} items, k={run.k}): pass@1 {run.pass_at_1:.3f} "
        f"(95% CI {run.ci95_low:.3f}-{run.ci95_high:.3f})"
        + (f", pass@{run.k} {run.pass_at_k:.3f}" if run.k > 1 else "")
    )
    print_table(
        ["figure", "value"],
        [
            ("tool calls per correct attempt", summary.get("tool_calls_per_correct")),
            ("turns per correct attempt", summary.get("turns_per_correct")),
            ("tool calls per attempt", summary.get("tool_calls_per_attempt")),
            ("out of turns or tokens (share)", summary.get("out_of_budget_share")),
            ("prompt tokens", summary.get("prompt_tokens")),
            ("completion tokens", summary.get("completion_tokens")),
            ("finish reasons", summary.get("finish_reasons")),
        ],
    )
    for key, title in BREAKDOWNS:
        groups = summary.get(key) or {}
        if groups:
            columns = [title, "items", "pass@1"] + ([f"pass@{run.k}"] if run.k > 1 else [])
            columns += ["answer hit step", "calls to correct"]  # realized difficulty of the correct attempts
            print_table(
                columns,
                [
                    (value, group["items"], group["pass_at_1"], *([group["pass_at_k"]] if run.k > 1 else []))
                    + tuple(
                        "" if group.get(key) is None else group[key] for key in ("answer_hit_step", "calls_to_correct")
                    )
                    for value, group in groups.items()
                ],
            )
    click.echo(f"labels: {(summary.get('label_trend') or {}).get('says', 'not checked')}")

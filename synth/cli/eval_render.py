"""How eval runs print: one run's tables, and several side by side."""

import click

from synth.cli.render import print_table
from synth.schemas import EvalRun

BREAKDOWNS = (
    ("by_hops", "hops"),
    ("by_label", "label"),
    ("by_relation_family", "relation family"),
    ("by_style", "style"),
)


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
            print_table(
                columns,
                [
                    (value, group["items"], group["pass_at_1"], group["pass_at_k"])[: len(columns)]
                    for value, group in groups.items()
                ],
            )
    click.echo(f"labels: {(summary.get('label_trend') or {}).get('says', 'not checked')}")


def comparison(runs: list[EvalRun]) -> tuple[list[str], list[tuple]]:
    """Rows of figures, one column per eval; groups are the union over the runs."""
    columns = ["figure", *(f"{run.id[:13]} {run.model[-24:]}" for run in runs)]
    rows: list[tuple] = [
        ("source", *(f"{run.source} ({run.split})" for run in runs)),
        ("items", *(run.items for run in runs)),
        ("pass@1", *(f"{run.pass_at_1:.3f}" for run in runs)),
        ("ci95", *(f"{run.ci95_low:.3f}-{run.ci95_high:.3f}" for run in runs)),
        ("pass@k", *(f"{run.pass_at_k:.3f} (k={run.k})" for run in runs)),
        ("tool calls per correct", *(run.summary.get("tool_calls_per_correct") for run in runs)),
        ("out of budget share", *(run.summary.get("out_of_budget_share") for run in runs)),
        ("completion tokens", *(run.summary.get("completion_tokens") for run in runs)),
    ]
    for key, title in BREAKDOWNS:
        values = list(dict.fromkeys(value for run in runs for value in (run.summary.get(key) or {})))
        for value in values:
            rows.append(
                (
                    f"{title} {value}",
                    *(_cell((run.summary.get(key) or {}).get(value)) for run in runs),
                )
            )
    rows.append(("labels", *((run.summary.get("label_trend") or {}).get("falls") for run in runs)))
    return columns, rows


def _cell(group: dict | None) -> str:
    return f"{group['pass_at_1']:.3f} (n={group['items']})" if group else "-"

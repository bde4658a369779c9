"""Several eval runs side by side: one row per figure, one column per run (`synth evals compare`
prints it, `synth browse` draws it)."""

from synth.schemas import EvalRun

BREAKDOWNS = (
    ("by_hops", "hops"),
    ("by_label", "label"),
    ("by_relation_family", "relation family"),
    ("by_style", "style"),
)
"""Summary key -> what its groups are, in the order they are shown."""


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

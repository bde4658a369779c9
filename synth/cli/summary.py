"""The end-of-run summary: what was made, what was dropped and why, tokens and time."""

import click


def print_result(result, as_json: bool) -> None:
    """What a command that publishes a version prints: the version as JSON, or the run summary."""
    if as_json:
        from synth.cli.render import print_json

        print_json(result.version.model_dump(mode="json"))
    else:
        print_summary(result)


def print_summary(result) -> None:
    from synth.cli.render import print_table

    version = result.version
    items = version.row_counts.get("items", 0)
    click.echo(f"published {version.ref}: {items} items in {result.seconds:.1f} s ({version.path})")
    short = shortfall(version, items)
    if short:
        click.echo(short)
    dropped: dict[str, int] = {}
    for stage in version.funnel:
        for reason, count in stage.dropped.items():
            dropped[f"{stage.stage}: {reason}"] = dropped.get(f"{stage.stage}: {reason}", 0) + count
    if dropped:
        print_table(
            ["dropped at stage: reason", "items"], sorted(dropped.items(), key=lambda pair: -pair[1]), title="dropped"
        )
    summary = {
        key: value
        for key, value in version.summary.items()
        if key not in ("seconds", "stage_seconds", "llm", "distill", "rounds", "quality", "realized_difficulty")
    }
    llm = version.summary.get("llm")
    if llm:  # model calls: one row per figure, the per-stage breakdown stays in `datasets show --json`
        summary.update(
            {key: value for key, value in llm.items() if key != "by_stage_model" and value not in (None, {})}
        )
    if summary:
        print_table(["figure", "value"], list(summary.items()), title="summary")
    print_rounds(version.summary.get("rounds"))
    print_quality(version.summary.get("quality"))
    print_realized(version.summary.get("realized_difficulty"))
    distill = version.summary.get("distill")
    if distill:
        print_table(["figure", "value"], list(distill.items()), title="distillation (teacher trajectories)")
    click.echo(
        f"browse: synth datasets show {version.ref}    export: synth export {version.ref} --format verl --out "
        f"{version.name}.parquet"
    )
    if distill and distill.get("items_with_trajectory"):
        click.echo(f"SFT data: synth export {version.ref} --format sft --out {version.name}-sft.jsonl")


def shortfall(version, items: int) -> str:
    """A line saying why a run published fewer items than `n` asked, and how to get them ("" when it
    did not): a consensus drop is not replaced, so without a surplus (`oversample`) every drop is
    one item short."""
    asked = version.config.get("n")
    if not isinstance(asked, int) or items >= asked:
        return ""
    consensus = sum(sum(stage.dropped.values()) for stage in version.funnel if stage.stage == "consensus")
    oversample = version.config.get("oversample")
    if consensus and isinstance(oversample, int | float):
        return (
            f"  {asked - items} short of the {asked} asked: the panel's consensus dropped {consensus} and "
            f"oversample {oversample} made {'no' if oversample <= 1 else 'too small a'} surplus; "
            f"--param oversample={max(1.2, round(oversample * 1.2, 1))} makes candidates to spare"
        )
    return f"  {asked - items} short of the {asked} asked: the dropped table says where they went"


REALIZED_COLUMNS = {
    "items": "items",
    "answer_hit_step": "answer hit step",
    "calls_to_correct": "calls to correct",
    "tokens_to_correct": "tokens to correct",
    "closed_book_rate": "closed-book rate",
    "teacher_answer_hit_step": "teacher hit step",
    "teacher_calls_to_correct": "teacher calls",
}


def print_realized(realized: dict | None) -> None:
    """Realized difficulty by hop count (synth.filters.realized): means over the items that have each
    figure; empty cells: no correct run to read it from."""
    from synth.cli.render import print_table

    if not realized:
        return
    rows = [
        (hops, *("" if figures.get(key) is None else figures[key] for key in REALIZED_COLUMNS))
        for hops, figures in realized.items()
    ]
    print_table(["hops", *REALIZED_COLUMNS.values()], rows, title="realized difficulty (sql: realized_difficulty)")


def print_quality(quality: dict | None) -> None:
    """The question-quality report (filters/quality.py): leaks, lint, length, openings, nouns, styles."""
    from synth.cli.render import print_table

    if quality:
        print_table(["figure", "value"], list(quality.items()), title="question quality")


def print_rounds(rounds: list[dict] | None) -> None:
    """Self-play rounds as one table, so the curriculum's moves read top to bottom."""
    from synth.cli.render import print_table

    if not rounds:
        return
    columns = [
        "round",
        "searches asked",
        "made (mean)",
        "targets",
        "questions",
        "rag verified",
        "solver success",
        "in band",
        "next",
        "why",
    ]
    rows = [
        (
            r["round"] + 1,
            r["requested_searches"],
            r["mean_searches_made"],
            r["targets"],
            r["questions"],
            r["rag_verified"],
            r["solver_success"],
            r["in_band"],
            r["next_searches"],
            f"{r['decision']}: {r['reason']}",
        )
        for r in rounds
    ]
    print_table(columns, rows, title="self-play rounds (curriculum)")

"""The last step of every run, whatever scheduled its stages: one atomic dataset version from the
label stage and the distillation shards, with the run's timing and calls summed from every saved
stage (whichever process made it), and the run recorded in the catalog."""

import time

from synth.errors import NothingSurvived
from synth.filters.realized import realized_by_hops
from synth.llm.accounting import Ledger, Price
from synth.pipelines.records import DistillShard, RecipeResult
from synth.run.plan import DISTILL, LABEL_STAGE, PLAN, stage_names
from synth.run.runner import Run
from synth.schemas import DatasetVersion, Item
from synth.store.publish import VersionSpec, publish_version
from synth.store.workdir import StageOutput


def publish(
    run: Run, flow_run_id: str | None = None, ui_url: str | None = None, resumed: list[str] | None = None
) -> DatasetVersion:
    """Publish `run`'s saved stages as one version. `resumed`: the stages found done when the run
    (re)started, if not when `run` was made."""
    started = time.monotonic()
    names = stage_names(run)
    published = {name for stage in PLAN if stage.published for name in stage.names(run)}
    # metadata alone for the stages whose tables the label stage already merged
    stages = [run.dir.load(name) if name in published else StageOutput(meta=run.dir.meta(name)) for name in names]
    outputs = dict(zip(names, stages, strict=True))
    result = RecipeResult.from_output(outputs[LABEL_STAGE.name(0)])
    distilled = [DistillShard.from_output(outputs[name]) for name in DISTILL.names(run)]
    if distilled:
        _check_distilled(run, result, distilled)
        result = run.recipe.add_distillation(result, distilled)
    ledger = Ledger(prices=dict(run.context.ledger.prices))  # every stage's calls, whichever process made them
    for stage in stages:
        ledger.absorb(stage.meta.get("llm", []))
        ledger.prices.update(
            {model: Price.model_validate(price) for model, price in stage.meta.get("prices", {}).items()}
        )
    publishing = time.monotonic() - started
    busy = sum(stage.meta.get("seconds", 0.0) for stage in stages) + publishing
    # concurrent shards overlap: the run's wall time is the union of its stages' intervals
    now = time.time()
    wall = wall_seconds(
        [stage.meta["interval"] for stage in stages if "interval" in stage.meta] + [[now - publishing, now]]
    )
    timing = stage_timing(names, stages) | {"publish": {"wall": round(publishing, 2), "busy": round(publishing, 2)}}
    llm_summary = {"llm": ledger.summary()} if ledger.totals or run.context.session is not None else {}
    info = run.dir.info
    items = len(result.tables.get("items", []))
    if items == 0:
        error = NothingSurvived(
            f"{info['recipe']} run {run.dir.id}: no item survived ({_drops(result.funnel)}); nothing was "
            "published. Change what makes candidates (another seed, graph or corpus, max_attempts_per_item, a "
            "looser check) and run again; the stages done so far are kept"
        )
        run.record(status="failed", error=error, funnel=result.funnel, summary=result.statistics | llm_summary)
        raise error
    spec = VersionSpec(
        name=info["dataset"],
        recipe=info["recipe"],
        config=info["config"],
        models=result.models,
        kg_snapshot=result.kg_snapshot,
        seed=info["config"].get("seed"),
        parent=result.parent,
        funnel=result.funnel,
        summary={
            "seconds": round(wall, 2),
            "busy_seconds": round(busy, 2),
            "stage_seconds": timing,
            "items_per_second": round(items / wall, 3) if wall else None,
            "run_id": run.dir.id,
            **result.statistics,
            "realized_difficulty": realized_by_hops(
                result.tables.get("items", []), result.tables.get("labels", []), result.tables.get("trajectories", [])
            ),
            **llm_summary,
        },
    )
    version = publish_version(run.settings, spec, result.tables)
    run.dir.update(status="published", version=version.version)
    run.record(status="published", version=version, flow_run_id=flow_run_id, ui_url=ui_url, resumed=resumed)
    return version


def _check_distilled(run: Run, result: RecipeResult, distilled: list[DistillShard]) -> None:
    """A shard distilled before the label (`Run.settled`) holds only items the label keeps: a
    recipe whose `surely_chosen` promised wrong must never publish a teacher's work silently."""
    kept = {item.id for item in result.tables.get("items", []) if isinstance(item, Item)}
    early = {trajectory.item_id for shard in distilled for trajectory in shard.trajectories} - kept
    if early:
        raise RuntimeError(
            f"{len(early)} item(s) were distilled but the label stage did not keep them "
            f"(e.g. {sorted(early)[0]}): recipe {run.recipe.name}'s surely_chosen is wrong"
        )


def stage_timing(names: list[str], stages: list[StageOutput]) -> dict[str, dict[str, float]]:
    """Wall and busy seconds per kind of stage (every `attempt-*` shard together, ...)."""
    kinds: dict[str, list[dict]] = {}
    for name, stage in zip(names, stages, strict=True):
        kinds.setdefault(name.split("-")[0], []).append(stage.meta)
    return {
        kind: {
            "wall": round(wall_seconds([meta["interval"] for meta in metas if "interval" in meta]), 2),
            "busy": round(sum(meta.get("seconds", 0.0) for meta in metas), 2),
        }
        for kind, metas in kinds.items()
    }


def wall_seconds(intervals: list[list[float]]) -> float:
    """Seconds covered by the union of [start, end] wall-clock intervals: time the run was working,
    whatever ran at once, and without the pause between a killed run and its resumption."""
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def _drops(funnel) -> str:
    """The largest reasons candidates were dropped for, as "stage: reason count" (up to five)."""
    drops = sorted(
        ((count, f"{stage.stage}: {reason}") for stage in funnel for reason, count in stage.dropped.items()),
        reverse=True,
    )
    return "; ".join(f"{where} {count:,}" for count, where in drops[:5]) or "no candidate was made"

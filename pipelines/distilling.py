"""The optional stage after labeling that every recipe shares: teacher rollouts on the published
items, rejection sampling, and the trajectories and statistics that go into the version.

One distillation shard (a slice of the labeled items) is one resumable stage of the run; all n
rollouts of an item are in the same shard, so each shard judges its own rollouts. Publishing
merges the shards' trajectories into the version and their figures into the summary.
"""

import asyncio
from collections.abc import Callable

from synth.errors import ConfigError
from synth.generators.distill import DistillConfig, Teacher
from synth.generators.guidance import Guidance
from synth.generators.path_teacher import PATH_TEACHER, PathTeacher
from synth.kg.graph import KnowledgeGraph
from synth.kg.name_mentions import WorldNames
from synth.pipelines.context import RunContext
from synth.pipelines.records import DistillShard, RecipeResult
from synth.schemas import Item
from synth.search.tools import SearchTools
from synth.solving.rejection import distill_statistics, judge_rollouts


async def distill_items(
    items: list[Item],
    config: DistillConfig,
    context: RunContext,
    tools: SearchTools,
    guidance: Callable[[Item], Guidance | None] | None = None,
    graph: Callable[[], KnowledgeGraph] | None = None,
    names: Callable[[], WorldNames | None] | None = None,
) -> DistillShard:
    """Rollouts of the teacher on `items`, judged; every rollout is kept in the output (rejected
    ones with their reason), so statistics and DPO negatives survive. `graph`: the world's graph,
    which the path teacher (`teacher: path`) walks; `names`: its entity names, for the
    `unseen_entity` check (asked only when that check is on)."""
    world_names = None
    if names is not None and "unseen_entity" in config.checks:  # read once per world, off the event loop:
        world_names = await asyncio.to_thread(names)  # the other shards' requests go on meanwhile
    if config.teacher == "path":
        if graph is None:
            raise ConfigError("distill.teacher=path needs a knowledge graph in the world; use teacher=model")
        walker = PathTeacher(graph(), tools)
        context.progress.log(f"distill: path teacher x {len(items)} items (no model) ...")
        walked = judge_rollouts(items, await walker.rollouts(items), config, names=world_names)
        return DistillShard(walked, teacher=PATH_TEACHER, protocol="native", items=len(items))
    client = context.llm_session({"teacher": config.teacher_model}).client("teacher")
    teacher = Teacher(config, client, tools, guidance, log=context.progress.log)
    context.progress.log(
        f"distill: {client.model_id} x {len(items)} items, n={config.n}, protocol {teacher.protocol} ..."
    )
    rollouts = await teacher.rollouts(items)
    judged = judge_rollouts(items, rollouts, config, names=world_names)
    return DistillShard(judged, teacher=client.model_id, protocol=teacher.protocol, items=len(items))


def add_distillation(result: RecipeResult, shards: list[DistillShard], config: DistillConfig) -> RecipeResult:
    """The labeled result with the teacher trajectories added and their figures in the statistics."""
    trajectories = [trajectory for shard in shards for trajectory in shard.trajectories]
    tables = dict(result.tables)
    tables["trajectories"] = list(tables.get("trajectories", [])) + trajectories
    statistics = dict(result.statistics)
    statistics["distill"] = {
        "teacher": shards[0].teacher if shards else None,
        "protocol": shards[0].protocol if shards else None,
        **distill_statistics(trajectories, sum(shard.items for shard in shards), config),
        "guided": config.guided,
    }
    models = dict(result.models)
    if shards:
        models["teacher"] = shards[0].teacher
    return RecipeResult(
        tables=tables, funnel=result.funnel, models=models, kg_snapshot=result.kg_snapshot, statistics=statistics
    )

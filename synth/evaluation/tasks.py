"""What an eval scores: the held-out items of a dataset version, or the rows of a benchmark file."""

import json
from dataclasses import dataclass
from pathlib import Path

from synth.errors import NotFoundError
from synth.evalsets import load_benchmark
from synth.schemas import DatasetVersion, Item
from synth.settings import Settings
from synth.splits import SplitFractions, split_predicate
from synth.store.reader import iter_records


@dataclass(frozen=True)
class EvalTask:
    item_id: str
    question: str
    answers: tuple[str, ...]
    """The answer first, then accepted aliases."""
    hops: int | None = None
    difficulty: str | None = None
    relation_family: str | None = None
    style: str | None = None


def relation_family(item: Item) -> str | None:
    """The domain of the relation that reaches the answer: `people` for /people/person/place_of_birth,
    the relation itself where it has no domain."""
    if not item.path:
        return None
    relation = item.path[-1].relation
    return relation.strip("/").split("/")[0] if relation.startswith("/") else relation


def item_task(item: Item) -> EvalTask:
    style = item.metadata.get("style")
    return EvalTask(
        item_id=item.id,
        question=item.question,
        answers=tuple(item.answers),
        hops=item.hops,
        difficulty=item.difficulty,
        relation_family=relation_family(item),
        style=style if isinstance(style, str) else None,
    )


def version_tasks(
    settings: Settings, version: DatasetVersion, split: str, fractions: SplitFractions, limit: int | None
) -> list[EvalTask]:
    """The items of `split` in stored order (the first `limit`)."""
    tasks = []
    for item in iter_records(settings, version, "items", split_predicate(split, "id", fractions)):
        tasks.append(item_task(item))
        if limit is not None and len(tasks) >= limit:
            break
    if not tasks:
        raise NotFoundError(
            f"{version.ref} has no items in the {split} split (test {fractions.test:g}, validation "
            f"{fractions.validation:g} of the items by id); evaluate --split all, or make more items"
        )
    return tasks


def benchmark_tasks(path: Path, limit: int | None) -> list[EvalTask]:
    """A benchmark file's rows with answers (a row without one cannot be scored and is refused)."""
    rows = load_benchmark(path)
    missing = [row.id for row in rows if not row.answers]
    if missing:
        raise NotFoundError(
            f"benchmark file {path} has {len(missing)} rows without an answer (first: id {json.dumps(missing[0])}); "
            "eval scores answers, so give a file with golden_answers/answers/answer"
        )
    return [EvalTask(f"{row.source}:{row.id}", row.question, row.answers) for row in rows[:limit]]

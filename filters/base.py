"""What every filter does: keep an item, or drop it with a snake_case reason.

Write `check` for a per-item rule (return True, or (False, "reason"), optionally with a score
and details); override `apply` instead when the decision depends on the whole batch (dedup) or
when model calls should be batched. `FilterChain` runs filters in order, stores every verdict,
and counts the funnel.
"""

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from synth.schemas import FilterVerdict, FunnelStage, Item

CheckResult = bool | tuple[bool, str] | tuple[bool, str, dict[str, Any]]


class Filter(ABC):
    name: ClassVar[str]

    @abstractmethod
    def check(self, item: Item) -> CheckResult:
        """True to keep; (False, "reason") or (False, "reason", details) to drop."""

    def apply(self, items: Sequence[Item]) -> list[FilterVerdict]:
        """One verdict per item, in order."""
        return [self._verdict(item, self.check(item)) for item in items]

    async def apply_async(self, items: Sequence[Item]) -> list[FilterVerdict]:
        """`apply` on a running event loop: a filter that calls a model awaits its requests there
        (sharing the loop's request pools); the others judge synchronously."""
        return self.apply(items)

    def _verdict(self, item: Item, result: CheckResult) -> FilterVerdict:
        if isinstance(result, bool):
            return FilterVerdict(item_id=item.id, filter=self.name, kept=result, reason=None if result else "dropped")
        kept, reason, *rest = result
        return FilterVerdict(
            item_id=item.id, filter=self.name, kept=kept, reason=reason, details=rest[0] if rest else {}
        )


@dataclass
class FilterChain:
    """Runs filters in order on the survivors of the previous one, recording verdicts and funnel stages."""

    filters: list[Filter]
    verdicts: list[FilterVerdict] = field(default_factory=list)
    stages: dict[str, FunnelStage] = field(default_factory=dict)

    def run(self, items: Sequence[Item]) -> list[Item]:
        survivors = list(items)
        for stage in self.filters:
            survivors = self._record(stage, survivors, stage.apply(survivors))
        return survivors

    async def run_async(self, items: Sequence[Item]) -> list[Item]:
        """`run` on a running event loop (see `Filter.apply_async`)."""
        survivors = list(items)
        for stage in self.filters:
            survivors = self._record(stage, survivors, await stage.apply_async(survivors))
        return survivors

    def _record(self, stage: Filter, survivors: list[Item], verdicts: list[FilterVerdict]) -> list[Item]:
        """Keep `stage`'s verdicts and count them; returns the items it kept."""
        self.verdicts.extend(verdicts)
        dropped = Counter(verdict.reason for verdict in verdicts if not verdict.kept)
        kept = [item for item, verdict in zip(survivors, verdicts) if verdict.kept]
        self._count(stage.name, len(survivors), len(kept), dropped)
        return kept

    def _count(self, name: str, entered: int, kept: int, dropped: Counter) -> None:
        stage = FunnelStage(stage=name, input=entered, kept=kept, dropped=dict(sorted(dropped.items())))
        self.stages[name] = add_stages(self.stages[name], stage) if name in self.stages else stage


def add_stages(first: FunnelStage, second: FunnelStage) -> FunnelStage:
    """Two counts of the same stage (two batches, two rounds) as one."""
    dropped = Counter(first.dropped) + Counter(second.dropped)
    return FunnelStage(
        stage=first.stage,
        input=first.input + second.input,
        kept=first.kept + second.kept,
        dropped=dict(sorted(dropped.items())),
    )

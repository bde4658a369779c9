"""Which candidates a run publishes, known item by item before its label stage: what lets a
shard's distillation start while other shards are still on the panel.

A recipe that labels item by item (`Recipe.labels_per_item`) gives each candidate the verdict
`Recipe.decide` gives from its own panel attempts and those of the calibration candidates (the
first `consensus.gold_calibration_items`, for the reader check); a quota then keeps those
`Recipe.surely_chosen` names whatever the undecided turn out to be. The streaming scheduler keeps
these verdicts as attempts come in; `Verdicts` reads them from the saved panel shards, for a
scheduler whose shards run elsewhere (the Prefect flow)."""

import threading

from synth.pipelines.base import Recipe
from synth.pipelines.labeling import Calibration
from synth.pipelines.records import PanelShard
from synth.run.stage_names import shard_stage
from synth.run.stage_store import StageStore
from synth.schemas import Item, SolverAttempt


def calibration_size(recipe: Recipe) -> int:
    """How many first candidates' gold-evidence attempts every verdict needs (0: none)."""
    consensus, panel = recipe.config.consensus, recipe.config.panel
    calibrating = (
        recipe.labels_per_item()
        and recipe.runs_panel()
        and consensus.drop_unanswerable
        and any("gold_evidence" in solver.conditions for solver in panel.solvers)
    )
    return consensus.gold_calibration_items if calibrating else 0


def calibration_of(
    first: list[Item], attempts_of: dict[str, list[SolverAttempt]], solvers: tuple[dict[str, str], str | None]
) -> Calibration:
    """The reader check's inputs: the gold-evidence attempts of the calibration candidates `first`
    (each item's attempts in `attempts_of`), and the panel's solvers and judge."""
    gold = [
        attempt for item in first for attempt in attempts_of.get(item.id, []) if attempt.condition == "gold_evidence"
    ]
    return Calibration({item.id for item in first}, gold, *solvers)


class Verdicts:
    """Verdicts of the candidates whose panel shards are saved in `store`, read once each."""

    def __init__(self, store: StageStore):
        self.store = store
        self.decided: dict[str, Item | None] = {}
        """Item id -> the item as published (difficulty set), or None: consensus drops it."""
        self.attempts: dict[str, list[SolverAttempt]] = {}
        self.loaded: set[int] = set()
        self.solvers: tuple[dict[str, str], str | None] = ({}, None)
        self._sure: tuple[tuple[int, int, bool], set[str]] | None = None
        """The last quota's answer and what it was asked on: a flow asks for every shard each poll."""
        self.lock = threading.Lock()
        """A flow asks from its scheduler's thread while a task of the same process may ask too."""

    def settled(
        self, recipe: Recipe, candidates: list[Item], shard_size: int, index: int, complete: bool = True
    ) -> list[Item] | None:
        """The published items of shard `index` (`shard_size` of the `candidates` made so far; all of
        them when `complete`) if every one of its candidates is decided and each is dropped or surely
        chosen; None otherwise (or if the recipe cannot tell before its label stage)."""
        if not recipe.labels_per_item():
            return None
        with self.lock:
            shard = candidates[index * shard_size : (index + 1) * shard_size]
            if recipe.runs_panel():
                self._load_saved(-(-len(candidates) // shard_size))
                if index not in self.loaded or not self._decide(recipe, candidates, shard_size):
                    return None
            else:  # no panel: every candidate is kept as made
                self.decided.update((item.id, item) for item in shard)
            sure = self._surely_chosen(recipe, candidates, complete)
            for item in shard:
                if item.id not in self.decided or (self.decided[item.id] is not None and item.id not in sure):
                    return None
            return [verdict for item in shard if (verdict := self.decided[item.id]) is not None]

    def _surely_chosen(self, recipe: Recipe, candidates: list[Item], complete: bool) -> set[str]:
        """`Recipe.surely_chosen` over what is known, asked again only once more is known (candidates
        and verdicts only grow)."""
        known = (len(candidates), len(self.decided), complete)
        if self._sure is None or self._sure[0] != known:
            dropped = {item_id for item_id, verdict in self.decided.items() if verdict is None}
            self._sure = (known, set(recipe.surely_chosen(candidates, dropped, complete=complete)))
        return self._sure[1]

    def _load_saved(self, shards: int) -> None:
        for index in range(shards):
            if index not in self.loaded and self.store.done(shard_stage(index)):
                shard = self.store.load(PanelShard, shard_stage(index))
                for attempt in shard.attempts:
                    self.attempts.setdefault(attempt.item_id, []).append(attempt)
                self.solvers = (shard.solvers, shard.judge)
                self.loaded.add(index)

    def _decide(self, recipe: Recipe, candidates: list[Item], shard_size: int) -> bool:
        """Decide every loaded candidate not decided yet; False while the calibration candidates'
        shards are not all saved."""
        first = candidates[: calibration_size(recipe)]
        if any(position // shard_size not in self.loaded for position in range(len(first))):
            return False
        calibration = calibration_of(first, self.attempts, self.solvers)
        for index in sorted(self.loaded):
            for item in candidates[index * shard_size : (index + 1) * shard_size]:
                if item.id not in self.decided:
                    self.decided[item.id] = recipe.decide(item, self.attempts.get(item.id, []), calibration)
        return True

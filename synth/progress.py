"""Progress bars for long work (rich), silent when output is not a terminal or --quiet is given."""

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Progress:
    """Hands out progress tasks; a recipe never needs to know whether anyone is watching."""

    def __init__(self, enabled: bool | None = None):
        self.enabled = sys.stderr.isatty() if enabled is None else enabled

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[Callable[[int], None]]:
        """Yields `advance(n)`; shows a bar with rate and ETA while the block runs."""
        if not self.enabled:
            yield lambda n=1: None
            return
        with _bars("{task.description}") as bar:
            task = bar.add_task(description, total=total)
            yield lambda n=1: bar.advance(task, n)

    @contextmanager
    def board(self, stages: list[str]) -> Iterator["Board"]:
        """One bar per stage, all shown at once (a streaming run advances them together); each
        stage's total may grow as work reaches it."""
        if not self.enabled:
            yield Board()
            return
        with _bars("{task.description:<9}") as bar:
            yield Board(bar, {stage: bar.add_task(stage, total=None) for stage in stages})

    def log(self, message: str) -> None:
        if self.enabled:
            print(message, file=sys.stderr)


def _bars(description: str):
    """A rich display of bars: description, bar, done/total, elapsed, ETA (rich loads only when shown)."""
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
    from rich.progress import Progress as RichProgress

    columns = (TextColumn(description), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    return RichProgress(*columns, transient=False)


class Board:
    """The bars of `Progress.board`; without a display every call does nothing."""

    def __init__(self, bar=None, tasks: dict | None = None):
        self._bar, self._tasks = bar, tasks or {}

    def advance(self, stage: str, n: int = 1) -> None:
        if self._bar is not None and stage in self._tasks:
            self._bar.advance(self._tasks[stage], n)

    def total(self, stage: str, total: int) -> None:
        """`stage` has `total` units of work in all (known so far); a stage without a bar is ignored."""
        if self._bar is not None and stage in self._tasks:
            self._bar.update(self._tasks[stage], total=total)

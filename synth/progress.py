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
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import (
            Progress as RichProgress,
        )

        columns = [
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
        ]
        with RichProgress(*columns, transient=False) as bar:
            task = bar.add_task(description, total=total)
            yield lambda n=1: bar.advance(task, n)

    def log(self, message: str) -> None:
        if self.enabled:
            print(message, file=sys.stderr)

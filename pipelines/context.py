"""What a recipe receives besides its config: where data lives, how to report, the models it may call."""

from dataclasses import dataclass, field

from synth.llm.accounting import Ledger
from synth.llm.base import LLMBackend
from synth.llm.models import BUILTIN_MODELS, ModelSpec
from synth.llm.session import LLMSession
from synth.progress import Progress
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.health import healthy
from synth.store.reader import read_columns


@dataclass
class RunContext:
    """What a recipe receives besides its config: where data lives, how to report, and the models
    it may call."""

    settings: Settings
    progress: Progress = field(default_factory=lambda: Progress(enabled=False))
    llm: str | None = None
    """A declared model every role uses instead of the recipe's (`--llm fake` for a dry run)."""
    models: dict[str, ModelSpec] = field(default_factory=lambda: dict(BUILTIN_MODELS))
    """The declared models (the built-ins and a flows file's `models:`), by name."""
    session: LLMSession | None = None
    dataset: str | None = None
    """The dataset the run publishes to, so filters can compare with its earlier versions."""
    ledger: Ledger = field(default_factory=Ledger)
    """Every model call of the run is counted here (and budgeted), whichever session makes it."""
    backends: dict[str, LLMBackend] = field(default_factory=dict)
    """Declared model name -> a backend that serves it instead of the declared one (tests inject a
    scripted backend here; calls still go through the run's cache, budget and ledger)."""

    def earlier_items(self, columns: list[str]) -> list[tuple]:
        """`columns` of every item in the published versions of this run's dataset."""
        if self.dataset is None:
            return []
        with Catalog.open(self.settings, read_only=True) as catalog:
            versions = healthy(
                self.settings.home.absolute(), catalog.versions(self.dataset)
            )  # a damaged one is warned about
        return [row for version in versions for row in read_columns(self.settings, version, "items", columns)]

    def earlier_questions(self) -> list[tuple[str, str, list[str]]]:
        """(item id, question, accepted answers) of every item in earlier versions of this run's
        dataset: what near-duplicate filters compare new questions with."""
        rows = self.earlier_items(["id", "question", "answer", "aliases"])
        return [(item_id, question, [answer, *aliases]) for item_id, question, answer, aliases in rows]

    def llm_session(self, roles: dict[str, str]) -> LLMSession:
        """The run's model session (one cache and ledger for the whole run), created on first use."""
        resolved = {role: self.llm or name for role, name in roles.items()}
        if self.session is None:
            self.session = LLMSession(
                self.settings,
                self.models,
                roles=resolved,
                log=self.progress.log,
                ledger=self.ledger,
                backends=self.backends,
            )
        else:
            self.session.roles.update(resolved)  # a later stage may bring roles of its own
        return self.session

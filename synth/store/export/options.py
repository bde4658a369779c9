"""What every exporter receives: the version to export, where to write, and the user's options."""

from dataclasses import dataclass, field
from pathlib import Path

from synth.schemas import DatasetVersion
from synth.settings import Settings
from synth.splits import SplitFractions, split_predicate
from synth.store.export.pass_band import PassBand


@dataclass(frozen=True)
class ExportRequest:
    settings: Settings
    version: DatasetVersion
    out: Path
    split: str = "train"
    """The held-out split whose items are exported (train, validation, test, or all; `synth.splits`)."""
    where: str | None = None
    """SQL predicate over the exported table's columns, e.g. "difficulty in ('medium', 'hard')"."""
    data_source: str | None = None
    prompt_template: Path | None = None
    force: bool = False
    role: str = "teacher"
    """Whose trajectories the SFT formats write: teacher rollouts, or self-play proposals."""
    contract: str | None = None
    """The agent contract to render under (`synth.contract`); None: the format's default."""
    arguments: str = "object"
    """Tool-call arguments as JSON objects (what chat templates encode once) or as JSON strings."""
    keep_malformed: bool = False
    """Trajectory formats: also write trajectories with a call whose arguments are no JSON object (as the
    strings the model wrote); by default they are left out and counted."""
    allow_dropping_calls: bool = False
    """Trajectory formats: write the rows even when not one of the tool calls the trajectories hold
    (or the tool use their text shows) comes out; by default such an export is refused."""
    procedural: str = "include"
    """Trajectory formats: the path teacher's model-free demonstrations included, excluded, or `only` them."""
    reasoning: str = "keep-all"
    """Which assistant turns keep their reasoning in trajectory exports (each format writes it the way
    its consumer reads it): keep-all, keep-last (the final turn's only) or drop."""
    context: str = "full"
    """Trajectory formats: each trajectory as it happened (full), or as its model saw it under a context
    policy (seen: a row per summary segment; synth.store.export.context_rows)."""
    validation_fraction: float | None = None
    test_fraction: float | None = None
    """The split fractions (None: the settings', SYNTH_VALIDATION_FRACTION and SYNTH_TEST_FRACTION)."""
    verl_version: str | None = None
    """verl: the release whose config keys the printed command uses; None: the installed one, else the newest known."""
    retrieval_url: str = "http://127.0.0.1:8000"
    """Where the exported verl tools reach `synth search serve`."""
    world_urls: dict[str, str] = field(default_factory=dict)
    """verl: a mixture's world name -> the URL its `synth search serve` listens at (--world-url)."""
    pass_band: PassBand | None = None
    """Only items whose pass rate in an eval of the policy to train lies in this band (synth.store.export.pass_band)."""

    @property
    def fractions(self) -> SplitFractions:
        return self.settings.split_fractions(self.validation_fraction, self.test_fraction)

    def predicate(self, id_column: str = "id", band: bool = True) -> str | None:
        """The rows of the chosen split that match --where and the pass band (None: every row), for a
        table whose item id is in `id_column` (`id` for items, `item_id` for trajectories)."""
        parts = [
            split_predicate(self.split, id_column, self.fractions),
            f"({self.where})" if self.where else None,
            self.pass_band.predicate(id_column) if band and self.pass_band else None,
        ]
        return " and ".join(part for part in parts if part) or None

    def selection(self) -> str:
        """What the predicate selects, in words, for a message that nothing matched."""
        chosen = "every split" if self.split == "all" else f"the {self.split} split"
        chosen += f" matching --where {self.where!r}" if self.where else ""
        return chosen + (f" inside {self.pass_band.words()}" if self.pass_band else "")


@dataclass
class ExportResult:
    path: Path
    rows: int
    notes: list[str] = field(default_factory=list)
    """Things the user must know to train on the export (e.g. which scorer the data_source needs)."""

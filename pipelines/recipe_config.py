"""The config sections every recipe reads the same way, declared once.

`Recipe` runs the shared stages from these sections (the world its agents search, the checks, the
panel and its consensus, the teacher), so a recipe's `Config` subclasses `RecipeConfig` and adds
only its own keys; it may give a standard section other defaults (a subclass of the section's
type, or another default value), never another meaning.
"""

from pydantic import Field

from synth.config import FrozenConfig
from synth.filters.checks import Checks
from synth.filters.consensus import ConsensusConfig
from synth.generators.distill import DistillConfig
from synth.search.world_settings import WorldSettings
from synth.solving.panel import PanelConfig


class RecipeConfig(FrozenConfig):
    world: WorldSettings = Field(
        default_factory=WorldSettings,
        description="What the run's agents search: a graph's corpus or a Search-R1 corpus file (world.corpus), "
        "with which retriever and k, under which agent contract.",
    )
    checks: Checks = Field(
        default_factory=list,
        description="The checks every candidate passes, in this order (synth.filters.CHECK_KINDS); a mapping "
        "changes entries by kind, e.g. checks.near_dup.threshold=0.7.",
    )
    panel: PanelConfig = Field(
        default_factory=PanelConfig, description="The solver panel that tries each candidate (panel.enabled)."
    )
    consensus: ConsensusConfig = Field(
        default_factory=ConsensusConfig, description="What the panel's attempts decide: drops and difficulty labels."
    )
    distill: DistillConfig = Field(
        default_factory=DistillConfig,
        description="Teacher rollouts on the labeled items, rejection-sampled for SFT (distill.enabled).",
    )

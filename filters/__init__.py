"""Filters: what keeps an item or drops it with a reason (`base`), and the check kinds a recipe's
`checks` list can name, registered here once (`CHECK_KINDS`). A new check is one module with a
`CheckConfig` subclass and one entry below (or `register_check` from outside the package)."""

from synth.filters.checks import KINDS as CHECK_KINDS
from synth.filters.checks import register_check
from synth.filters.contamination import ContaminationConfig
from synth.filters.dedup import DedupConfig
from synth.filters.format import FormatConfig
from synth.filters.leakage import LeakageConfig
from synth.filters.near_dup import NearDupConfig
from synth.filters.proposer_searches import ProposerSearchesConfig
from synth.filters.shortcut import ShortcutConfig

for _check in (
    FormatConfig,
    LeakageConfig,
    DedupConfig,
    ProposerSearchesConfig,
    NearDupConfig,
    ContaminationConfig,
    ShortcutConfig,
):
    register_check(_check)

__all__ = ["CHECK_KINDS", "register_check"]

"""The end-of-run summary says when a run published fewer items than `--n` asked, why, and the fix."""

from types import SimpleNamespace

from synth.cli.summary import shortfall
from synth.schemas import FunnelStage


def _version(n: int, oversample: float | None, consensus_drops: int):
    config = {"n": n} | ({"oversample": oversample} if oversample is not None else {})
    funnel = [FunnelStage(stage="walk", input=90, kept=60, dropped={"dead_end": 30})]
    if consensus_drops:
        funnel.append(
            FunnelStage(
                stage="consensus", input=n, kept=n - consensus_drops, dropped={"trivial_closed_book": consensus_drops}
            )
        )
    return SimpleNamespace(config=config, funnel=funnel)


def test_a_run_short_of_n_by_consensus_drops_names_them_and_the_surplus_that_fixes_it():
    line = shortfall(_version(50, 1.0, 1), 49)
    assert "1 short of the 50 asked" in line and "consensus dropped 1" in line
    assert "oversample 1.0 made no surplus" in line and "--param oversample=1.2" in line
    larger = shortfall(_version(50, 1.5, 9), 46)
    assert "4 short" in larger and "too small a surplus" in larger and "--param oversample=1.8" in larger


def test_a_full_run_says_nothing_and_a_short_one_without_drops_points_at_the_dropped_table():
    assert shortfall(_version(50, 1.0, 0), 50) == ""
    assert shortfall(_version(50, None, 0), 47) == "  3 short of the 50 asked: the dropped table says where they went"

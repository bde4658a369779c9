"""RL items chosen for the policy about to be trained: those whose pass rate, in a `synth eval` of that
policy, lies in a band.

Under GRPO an item every sample of the policy solves, or none does, has zero advantage: it costs a
rollout and teaches nothing (DAPO drops such groups while training). `synth export --for-eval ID
--pass-band 0.1:0.9` drops them before: an item is kept when the mean of its attempts' `correct` in
that eval lies in the band, both ends included. The rule is one DuckDB subquery over the eval's
attempts file, added to the export's predicate, so a version of a million items is selected without
loading one into Python; the export's notes say how many items fell below, inside and above the
band (and how many the eval never tried), by hops and by label.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from synth.errors import ConfigError
from synth.settings import Settings
from synth.store.evals import load_run, pass_rates_sql

_BAND = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*:\s*([0-9]*\.?[0-9]+)\s*$")


@dataclass(frozen=True)
class PassBand:
    eval_id: str
    model: str
    source: str
    """NAME@VERSION the eval ran on (matching is by item id, so a curated child's items match too)."""
    low: float
    high: float
    rates_sql: str
    """Per evaluated item `item_id` and `pass_rate` (synth.store.evals.pass_rates_sql)."""

    def predicate(self, id_column: str) -> str:
        """Rows whose item's pass rate lies in the band."""
        return (
            f"{id_column} in (select item_id from ({self.rates_sql}) "
            f"where pass_rate between {self.low!r} and {self.high!r})"
        )

    def words(self) -> str:
        return f"--pass-band {self.low:g}:{self.high:g} of eval {self.eval_id} ({self.model} on {self.source})"


def parse_band(text: str) -> tuple[float, float]:
    """'0.1:0.9' -> (0.1, 0.9); anything else is one line naming the form."""
    found = _BAND.match(text or "")
    if found is None:
        raise ConfigError(f"--pass-band {text!r} is not LOW:HIGH, pass rates such as 0.1:0.9")
    low, high = float(found.group(1)), float(found.group(2))
    if not 0 <= low <= high <= 1:
        raise ConfigError(f"--pass-band {text!r}: need 0 <= LOW <= HIGH <= 1, e.g. 0.1:0.9")
    return low, high


def resolve_band(settings: Settings, eval_id: str | None, band: str | None) -> PassBand | None:
    """The band of a finished eval (an id or a unique prefix), or None when neither is given."""
    if eval_id is None and band is None:
        return None
    if eval_id is None:
        raise ConfigError("--pass-band needs --for-eval EVAL_ID: the eval of the policy to train (synth evals list)")
    low, high = parse_band(band if band is not None else "0.1:0.9")
    run = load_run(settings, eval_id)
    return PassBand(run.id, run.model, run.source, low, high, pass_rates_sql(settings, run.id))


def band_note(band: PassBand, items_glob: Path, predicate: str | None) -> str:
    """How the chosen split's items (before the band) fell: below, inside, above, never tried; by hops and label."""
    import duckdb

    path = str(items_glob).replace("'", "''")
    chosen = f"select id, hops, difficulty from read_parquet('{path}')" + (f" where {predicate}" if predicate else "")
    sql = f"""
        select hops, coalesce(difficulty, '-') as label,
            case when r.pass_rate is null then 'untried'
                 when r.pass_rate < {band.low!r} then 'below'
                 when r.pass_rate > {band.high!r} then 'above' else 'inside' end as place,
            count(*) as n
        from ({chosen}) i left join ({band.rates_sql}) r on r.item_id = i.id
        group by all order by all"""
    with duckdb.connect() as connection:
        rows = connection.sql(sql).fetchall()
    places = ("below", "inside", "above", "untried")
    totals = {place: sum(n for _, _, where, n in rows if where == place) for place in places}

    def grouped(index: int) -> str:
        keys = sorted({row[index] for row in rows}, key=str)
        parts = []
        for key in keys:
            counts = [sum(n for *row, where, n in rows if row[index] == key and where == place) for place in places[:3]]
            parts.append(f"{key}: {'/'.join(map(str, counts))}")
        return ", ".join(parts)

    untried = f", {totals['untried']} never tried by the eval (left out)" if totals["untried"] else ""
    return (
        f"{band.words()}: kept {totals['inside']} items, {totals['below']} below and {totals['above']} above "
        f"left out{untried}; below/inside/above by hops {grouped(0)}; by label {grouped(1)}"
    )

"""One RL set from several versions: stated weights, no question twice, and an order a trainer reads.

Labs train on mixtures (a KG set, a corpus set, an imported benchmark) with stated shares, and order
them from easier to harder in stages. `synth mix NAME a@1=0.5 b@2=0.3 c@1=0.2` publishes such a
set as a new version, browsable, auditable and exportable like any other:
- **weights**: each source gives round(n x weight) items (largest remainder), so its share is its
  weight to within one item; `n` is at most what the shortest source allows, and asking more is one
  line naming that source;
- **no duplicates**: an item whose id or normalized question an earlier source already has is left
  out of the later source's pool (sources in the order given), and counted;
- **order**: `shuffled`, or `easy-to-hard` by `label`, `hops` or the policy's `pass-rate` (in a
  `synth eval` of it: higher is easier), in `stages` stages, shuffled within each; the version's
  items are stored in that order, which every export keeps (verl reads it with `data.shuffle=false`,
  which the verl export then prints);
- **lineage**: the config names every source and weight, each item's metadata its source, weight
  and stage, and the summary the realized shares, the duplicates and the order. The items keep their
  labels (the sources' label records are copied with them).
"""

import math
import random
import re
from dataclasses import dataclass, field
from typing import get_args

from synth.contract.matching import normalize_answer
from synth.errors import ConfigError
from synth.schemas import DatasetVersion, Item
from synth.schemas.item import DifficultyOrUnlabeled
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.evals import load_run, pass_rates_sql
from synth.store.publish import VersionSpec, publish_version
from synth.store.reader import iter_records
from synth.store.version_world import retrieval_k

ORDERS = ("shuffled", "easy-to-hard")
KEYS = ("label", "hops", "pass-rate")
LABEL_RANK = {label: rank for rank, label in enumerate(get_args(DifficultyOrUnlabeled))}
_SOURCE = re.compile(r"^(?P<ref>[^=\s]+)=(?P<weight>[0-9]*\.?[0-9]+)$")


@dataclass(frozen=True)
class MixSource:
    ref: str
    weight: float
    """The share of the mixture's items, normalized so the weights sum to 1."""


@dataclass(frozen=True)
class MixRequest:
    name: str
    sources: list[MixSource]
    n: int | None = None
    """Items in the mixture (None: as many as the shortest source allows at its weight)."""
    order: str = "shuffled"
    by: str = "label"
    stages: int = 1
    for_eval: str | None = None
    """An eval of the policy to train, for `by="pass-rate"`."""
    seed: int = 0


@dataclass
class _Pool:
    source: MixSource
    version: DatasetVersion
    items: list[Item] = field(default_factory=list)
    duplicates: int = 0


def parse_sources(texts: list[str]) -> list[MixSource]:
    """'NAME[@V]=WEIGHT' each; weights positive, normalized to sum 1; a source once."""
    if not texts:
        raise ConfigError("give the sources as NAME[@VERSION]=WEIGHT, e.g. multihop@3=0.6 selfplay@1=0.4")
    parsed = []
    for text in texts:
        found = _SOURCE.match(text.strip())
        if found is None or float(found.group("weight")) <= 0:
            raise ConfigError(
                f"source {text!r} is not NAME[@VERSION]=WEIGHT with a weight above 0, e.g. multihop@3=0.6"
            )
        parsed.append((found.group("ref"), float(found.group("weight"))))
    refs = [ref for ref, _ in parsed]
    if len(set(refs)) < len(refs):
        raise ConfigError(f"a source is named twice in {' '.join(texts)}; give each version once")
    total = sum(weight for _, weight in parsed)
    return [MixSource(ref, weight / total) for ref, weight in parsed]


def mix(settings: Settings, request: MixRequest, log=print) -> DatasetVersion:
    """Publish the mixture `request` describes (see the module docstring)."""
    if request.order not in ORDERS:
        raise ConfigError(f"unknown --order {request.order!r}; choose {' or '.join(ORDERS)}")
    if request.by not in KEYS:
        raise ConfigError(f"unknown --by {request.by!r}; choose {', '.join(KEYS)}")
    if request.by == "pass-rate" and request.order == "easy-to-hard" and request.for_eval is None:
        raise ConfigError("--by pass-rate needs --for-eval EVAL_ID: the eval of the policy to train (synth evals list)")
    if request.stages < 1:
        raise ConfigError(f"--stages {request.stages}: need at least 1")
    rates = _pass_rates(settings, request.for_eval) if request.for_eval else {}
    pools = _pools(settings, request)
    n = _size(pools, request.n)
    quotas = _quotas(n, [pool.source.weight for pool in pools])
    rng = random.Random(request.seed)
    chosen: list[tuple[Item, _Pool]] = []
    for pool, quota in zip(pools, quotas, strict=True):
        chosen += [(item, pool) for item in rng.sample(pool.items, quota)]
    ordered = _ordered(chosen, request, rates, rng)
    items = [
        item.model_copy(
            update={
                "metadata": {
                    **item.metadata,
                    "mix": {
                        "source": pool.version.ref,
                        "weight": round(pool.source.weight, 6),
                        "stage": index * request.stages // len(ordered),
                    },
                }
            }
        )
        for index, (item, pool) in enumerate(ordered)
    ]
    labels = _labels(settings, pools, {item.id for item in items})
    spec = VersionSpec(
        name=request.name,
        recipe="mix",
        config={
            "mix": {
                "sources": [
                    {
                        "ref": pool.version.ref,
                        "weight": pool.source.weight,
                        "retrieval_k": retrieval_k(pool.version.config),
                    }
                    for pool in pools
                ],
                "order": request.order,
                "by": request.by if request.order != "shuffled" else None,
                "stages": request.stages,
                "for_eval": request.for_eval,
                "seed": request.seed,
            }
        },
        parent=pools[0].version.ref,
        seed=request.seed,
        summary=_summary(pools, quotas, n, request, rates, items),
    )
    version = publish_version(settings, spec, {"items": items, "labels": labels})
    log(f"published {version.ref}: {n} items from {len(pools)} sources ({_shares_text(pools, quotas, n)})")
    return version


def _pools(settings: Settings, request: MixRequest) -> list[_Pool]:
    """Each source's items, less those an earlier source already has (by id or by question normalized
    as the dedup check normalizes it; the store does not import checks)."""
    seen: set[str] = set()
    pools = []
    with Catalog.open(settings, read_only=True) as catalog:
        versions = [catalog.resolve(source.ref) for source in request.sources]
    for source, version in zip(request.sources, versions, strict=True):
        pool = _Pool(source, version)
        for item in iter_records(settings, version, "items"):
            keys = {f"id:{item.id}", f"question:{normalize_answer(item.question)}"}
            if keys & seen:
                pool.duplicates += 1
                continue
            seen |= keys
            pool.items.append(item)
        pools.append(pool)
    return pools


def _size(pools: list[_Pool], asked: int | None) -> int:
    """The mixture's size: `asked`, or the most every source can give at its weight."""
    fits = min(math.floor(len(pool.items) / pool.source.weight + 1e-9) for pool in pools)
    short = min(pools, key=lambda pool: len(pool.items) / pool.source.weight)
    if asked is None:
        if fits == 0:
            raise ConfigError(f"{short.version.ref} has no item left to give (after duplicates); drop it or add items")
        return fits
    if asked > fits:
        raise ConfigError(
            f"--n {asked} needs {math.ceil(asked * short.source.weight)} items of {short.version.ref} at weight "
            f"{short.source.weight:.3g}, which has {len(short.items)} (after duplicates); ask for at most {fits}"
        )
    return asked


def _quotas(n: int, weights: list[float]) -> list[int]:
    """n split by weight, largest remainders first: every share within one item of n x weight."""
    exact = [n * weight for weight in weights]
    quotas = [math.floor(value) for value in exact]
    for index in sorted(range(len(weights)), key=lambda i: exact[i] - quotas[i], reverse=True)[: n - sum(quotas)]:
        quotas[index] += 1
    return quotas


def _ordered(chosen: list[tuple[Item, _Pool]], request: MixRequest, rates: dict[str, float], rng) -> list:
    """Shuffled, or easy to hard by the key (ties and each stage shuffled)."""
    rng.shuffle(chosen)
    if request.order == "shuffled":
        return chosen

    def difficulty(entry) -> float:
        item = entry[0]
        if request.by == "label":
            return LABEL_RANK.get(item.difficulty, len(LABEL_RANK))
        if request.by == "hops":
            return item.hops
        return -rates.get(item.id, -1.0)  # never tried: hardest, last

    ranked = sorted(chosen, key=difficulty)  # stable: ties keep the shuffled order
    stages = [
        ranked[len(ranked) * s // request.stages : len(ranked) * (s + 1) // request.stages]
        for s in range(request.stages)
    ]
    if request.stages > 1:
        for stage in stages:
            rng.shuffle(stage)
    return [entry for stage in stages for entry in stage]


def _pass_rates(settings: Settings, eval_id: str) -> dict[str, float]:
    """Per item, the mean correct of its attempts in the eval (DuckDB over its attempts file)."""
    import duckdb

    with duckdb.connect() as connection:
        return dict(connection.sql(pass_rates_sql(settings, load_run(settings, eval_id).id)).fetchall())


def _labels(settings: Settings, pools: list[_Pool], kept: set[str]) -> list:
    """The kept items' label records, one per item (the first source's, as with the items)."""
    first = {}
    for pool in pools:
        if pool.version.row_counts.get("labels"):
            for label in iter_records(settings, pool.version, "labels"):
                if label.item_id in kept:
                    first.setdefault(label.item_id, label)
    return list(first.values())


def _summary(pools, quotas, n, request, rates, items) -> dict:
    return {
        "mix": {
            pool.version.ref: {
                "weight": round(pool.source.weight, 6),
                "items": quota,
                "share": round(quota / n, 6) if n else 0.0,
                "duplicates_left_out": pool.duplicates,
                "available": len(pool.items),
            }
            for pool, quota in zip(pools, quotas, strict=True)
        },
        "order": request.order
        if request.order == "shuffled"
        else f"{request.order} by {request.by}, {request.stages} stage(s)",
        "never_tried": sum(item.id not in rates for item in items) if request.by == "pass-rate" and rates else None,
    }


def _shares_text(pools, quotas, n) -> str:
    return ", ".join(
        f"{pool.version.ref} {quota} ({quota / n:.1%} for weight {pool.source.weight:.1%})"
        for pool, quota in zip(pools, quotas, strict=True)
    )

"""Drawing an audit sample: which items of a version a reader sees, in which order, under which ids.

The sheet ids say nothing about the items (a hash of the sample and a position), so a reader can
not tell a 7-hop item from a 2-hop one by its id, and an id from another version's sheet is simply
unknown there. The sample is stored before the sheets are written: an import checks every id
against it.
"""

import random
from datetime import UTC, datetime

from synth.errors import ConfigError
from synth.hashing import content_hash
from synth.schemas import AuditSample, DatasetVersion, Item, SampledItem
from synth.settings import Settings
from synth.store.arrow_schema import from_row
from synth.store.reader import shard_glob


def read_items(settings: Settings, version: DatasetVersion) -> list[Item]:
    """Every item of the version (an audit reads tens of them; a version of a million reads in seconds)."""
    import duckdb

    files = str(shard_glob(settings, version, "items")).replace("'", "''")
    connection = duckdb.connect()
    try:
        cursor = connection.execute(f"select * from read_parquet('{files}') order by id")
        names = [column[0] for column in cursor.description or []]
        rows = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        connection.close()
    return [from_row(Item, row) for row in rows]


def draw_sample(
    settings: Settings,
    version: DatasetVersion,
    n: int,
    seed: int,
    style: str | None = None,
    min_hops: int | None = None,
    max_hops: int | None = None,
) -> tuple[AuditSample, dict[str, Item]]:
    """`n` items drawn with `seed` among those of `style` and hops in [min_hops, max_hops] (the same
    arguments draw the same sample), and the items by id."""
    items = [
        item
        for item in read_items(settings, version)
        if (style is None or item.metadata.get("style") == style)
        and (min_hops is None or item.hops >= min_hops)
        and (max_hops is None or item.hops <= max_hops)
    ]
    if not items:
        wanted = ", ".join(
            part
            for part in (
                f"style {style}" if style else "",
                f"at least {min_hops} hops" if min_hops else "",
                f"at most {max_hops} hops" if max_hops else "",
            )
            if part
        )
        raise ConfigError(
            f"{version.ref} has no items{' with ' + wanted if wanted else ''}; "
            "`synth datasets show` lists its styles and hops"
        )
    chosen = random.Random(seed).sample(items, min(n, len(items)))
    key = {"dataset": version.name, "version": version.version, "seed": seed, "n": n}
    key.update({"style": style, "min_hops": min_hops, "max_hops": max_hops})
    sample_id = content_hash(key, length=8)
    sample = AuditSample(
        id=sample_id,
        dataset=version.name,
        version=version.version,
        seed=seed,
        style=style,
        min_hops=min_hops,
        max_hops=max_hops,
        created_at=datetime.now(UTC),
        items=[
            SampledItem(sheet_id=f"{sample_id}-{position + 1:02d}", item_id=item.id)
            for position, item in enumerate(chosen)
        ],
    )
    return sample, {item.id: item for item in chosen}

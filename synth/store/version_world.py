"""The world a version was made in, as its config records it: what a mixture's export must serve
for its rows, and how many passages a search gave its agents."""

from synth.search.world_settings import move_world_keys


def world_key(config: dict) -> tuple:
    """What decides a version's world: its graph or corpus file, how passages are cut and searched."""
    world = (move_world_keys(dict(config or {})) or {}).get("world") or {}
    return (world.get("kg"), world.get("corpus"), world.get("passage_words"), world.get("retriever") or "bm25")


def retrieval_k(config: dict) -> int:
    """Passages per search the version's agents got (the panel's k, else the world's; a mixture: its
    first source's). Versions made before the `world` section kept the world's keys at the top level."""
    config = config or {}
    sources = (config.get("mix") or {}).get("sources") or []
    if sources and sources[0].get("retrieval_k"):
        return int(sources[0]["retrieval_k"])
    world = config.get("world") or {}
    return int(
        (config.get("panel") or {}).get("retrieval_k") or world.get("retrieval_k") or config.get("retrieval_k") or 3
    )

"""The names of a run's saved stages (folders under the run's folder), shared by every way of
driving a run (`synth.run.runner`, `synth.run.streaming`, the Prefect flows)."""

CONSTRUCT = "construct"
LABEL = "label"


def shard_stage(index: int) -> str:
    """The solver panel on candidates [index x shard_size, (index + 1) x shard_size)."""
    return f"attempt-{index:05d}"


def round_stage(index: int) -> str:
    return f"round-{index:05d}"


def distill_stage(index: int) -> str:
    """The teacher on the published items of panel shard `index`."""
    return f"distill-{index:05d}"


def slice_stage(index: int) -> str:
    """Candidates [index x shard_size, (index + 1) x shard_size), saved as construction makes them."""
    return f"candidates-{index:05d}"

import numpy as np
import pytest
from prefect_server import prefect_server  # noqa: F401  (the session fixture; tests/pipelines is on sys.path)
from raw_kg import RawGraph

from synth.kg.multiplicity import WorldConfig
from synth.kg.snapshot import load_snapshot
from synth.pipelines.multihop import wrong_edges


@pytest.fixture(scope="session")
def raw_kg() -> RawGraph:
    """The bundled graph from its shipped files, read once per session."""
    return RawGraph()


@pytest.fixture(scope="session")
def kept_kg(raw_kg) -> RawGraph:
    """The shipped triples less those a run takes as false (readers' denials in the override file,
    facts that contradict their relation): what uniqueness is re-derived under (Michael Kamen,
    credited in Freebase with the music of a film made four years after his death, is no answer)."""
    kg = load_snapshot()
    heads, relations, tails = kg.edges()
    false = {
        (kg.node_ids[heads[edge]], kg.relation_ids[relations[edge]], kg.node_ids[tails[edge]])
        for edge in np.flatnonzero(wrong_edges(kg, WorldConfig()))
    }
    return raw_kg.without(false)

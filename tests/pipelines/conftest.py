import pytest  # noqa: E402
from prefect_server import prefect_server  # noqa: F401  (the session fixture; tests/pipelines is on sys.path)
from raw_kg import RawGraph  # noqa: E402


@pytest.fixture(scope="session")
def raw_kg() -> RawGraph:
    """The bundled graph from its shipped files, read once per session."""
    return RawGraph()

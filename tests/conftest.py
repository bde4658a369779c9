"""Hermetic test environment: every test gets its own data root; nothing reads the home directory."""

import os

import pytest

from synth.schemas import Constraint, Hop, Item, Provenance, Step
from synth.settings import Settings


@pytest.fixture(autouse=True)
def _hermetic(tmp_path_factory, monkeypatch):
    hf_home = tmp_path_factory.mktemp("hf_home")
    monkeypatch.setenv("HF_HOME", str(hf_home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("SYNTH_HOME", str(tmp_path_factory.mktemp("synth_home")))
    for variable in ("SYNTH_CATALOG", "SYNTH_LOCK_TIMEOUT_S"):
        monkeypatch.delenv(variable, raising=False)


@pytest.fixture
def settings() -> Settings:
    return Settings()


def _make_item(index: int = 0, **changes) -> Item:
    """A small valid 2-hop item; `changes` override any field."""
    values = dict(
        id=f"item-{index}",
        question=f"Which film was directed by the person born in Town {index}?",
        answer=f"Film {index}",
        aliases=[f"The Film {index}"],
        recipe="multihop",
        hops=2,
        answer_entity_id=f"/m/film{index}",
        path=[
            Hop(head=f"/m/person{index}", relation="/people/person/place_of_birth", tail=f"/m/town{index}", direction="inverse"),
            Hop(head=f"/m/person{index}", relation="/film/director/film", tail=f"/m/film{index}"),
        ],
        constraints=[
            Constraint(
                anchor=f"/m/town{index}",
                steps=[
                    Step(relation="/people/person/place_of_birth", direction="inverse"),
                    Step(relation="/film/director/film"),
                ],
            )
        ],
        evidence_doc_ids=[f"doc-{index}"],
        provenance=Provenance(generator="test", seed=index, kg_snapshot="test-kg"),
        metadata={"index": index},
    )
    values.update(changes)
    return Item(**values)


@pytest.fixture
def make_item():
    """Factory of small valid items: `make_item(3, question=...)`."""
    return _make_item


@pytest.fixture
def run_cli(capsys):
    """Run `synth ARGS...` in-process: (exit code, stdout, stderr)."""
    from synth.cli.main import main

    def run(*args):
        with pytest.raises(SystemExit) as exit_info:
            main(list(args))
        captured = capsys.readouterr()
        return exit_info.value.code or 0, captured.out, captured.err

    return run


def pytest_configure(config):
    os.environ.setdefault("PYTHONHASHSEED", "0")

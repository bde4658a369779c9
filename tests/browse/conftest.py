"""Fixtures of the browse tests: the store of browse_store.py, and `synth browse` serving it on a
free loopback port."""

import sys
from pathlib import Path

import pytest

from synth.settings import Settings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from browse_store import make_store  # noqa: E402


@pytest.fixture
def store(tmp_path) -> Settings:
    settings = Settings(home=tmp_path)
    make_store(settings)
    return settings


@pytest.fixture
def served(store):
    """`synth browse`'s app on a free loopback port (page size 3), in a thread; yields its URL."""
    from synth.browse.background import serving

    with serving(store, page_size=3) as url:
        yield url

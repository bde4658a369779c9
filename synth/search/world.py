"""The corpus a command or recipe searches: from a knowledge graph (default: the bundled one) or a
Search-R1 JSONL file."""

from pathlib import Path

from synth.search.corpus import Corpus
from synth.settings import Settings


def load_corpus(settings: Settings, kg: str | None = None, corpus_file: Path | None = None) -> Corpus:
    if corpus_file is not None:
        return Corpus.from_jsonl(corpus_file)
    from synth.kg.snapshot import load_kg

    return Corpus.from_kg(load_kg(kg, settings.kg_path))


def search_cache(settings: Settings) -> Path:
    return settings.cache_dir / "search"

"""The corpus a command or recipe searches: from a knowledge graph (default: the bundled one) or a
Search-R1 JSONL file, stored once under the cache's `corpus/` folder and memory-mapped after that."""

from collections.abc import Callable
from pathlib import Path

from synth.search.corpus import Corpus
from synth.search.passages import PASSAGE_WORDS
from synth.settings import Settings


def load_corpus(
    settings: Settings,
    kg: str | None = None,
    corpus_file: Path | None = None,
    passage_words: int = PASSAGE_WORDS,
    log: Callable[[str], None] = print,
) -> Corpus:
    if corpus_file is not None:
        return Corpus.from_jsonl(corpus_file, corpus_store(settings), passage_words=passage_words, log=log)
    from synth.kg.snapshot import load_kg

    return Corpus.from_kg(load_kg(kg, settings.kg_path), corpus_store(settings), log=log)


def corpus_store(settings: Settings) -> Path:
    return settings.cache_dir / "corpus"


def search_cache(settings: Settings) -> Path:
    return settings.cache_dir / "search"

"""`synth search`: query the corpus, build its indexes, serve it Search-R1-style, export it."""

from pathlib import Path

import click

from synth.cli.options import json_option, load_settings
from synth.search.passages import PASSAGE_WORDS

RETRIEVER_CHOICES = ["bm25", "dense", "hybrid"]


def world_options(function):
    function = click.option(
        "--corpus",
        "corpus_file",
        type=click.Path(path_type=Path),
        help='A Search-R1 corpus JSONL ({"id", "contents"}) instead of a graph\'s corpus.',
    )(function)
    function = click.option(
        "--kg", help="Graph whose corpus to use: an imported name, folder or .duckdb (default: bundled)."
    )(function)
    function = click.option(
        "--passage-words",
        type=click.IntRange(0),
        default=PASSAGE_WORDS,
        show_default=True,
        help="Cut --corpus documents into passages of this many words (Search-R1's 100); 0 keeps "
        "whole documents (as a remote server that indexes whole documents has them).",
    )(function)
    return function


def retriever_option(function):
    return click.option(
        "--retriever",
        type=click.Choice(RETRIEVER_CHOICES),
        default="bm25",
        show_default=True,
        help="BM25 (bm25s), dense (sentence-transformers) or their reciprocal-rank fusion.",
    )(function)


def _check_retriever(context, parameter, value: str) -> str:
    from synth.search.world import check_retriever

    try:
        return check_retriever(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def searching_retriever_option(function):
    return click.option(
        "--retriever",
        default="bm25",
        show_default=True,
        callback=_check_retriever,
        help="BM25 (bm25s), dense (sentence-transformers), their reciprocal-rank fusion, or the URL of a "
        "Search-R1-compatible /retrieve endpoint over the same corpus.",
    )(function)


def _world(settings, kg, corpus_file, passage_words):
    from synth.search.world import World

    return World(settings, kg=kg, corpus_file=corpus_file, passage_words=passage_words, log=_stderr)


def _stderr(line: str) -> None:
    click.echo(line, err=True)


@click.group()
def search() -> None:
    """The corpus agents search: one document per entity and chunk of its facts, or your own."""


@search.command()
@click.argument("query")
@click.option("--k", type=click.IntRange(1, 100), default=5, show_default=True, help="How many documents.")
@world_options
@searching_retriever_option
@json_option
def query(query, k, kg, corpus_file, passage_words, retriever, as_json) -> None:
    """Search the corpus and print the top documents as agents see them.

    Example: synth search query "Which film did Robert Altman produce?" --retriever hybrid
    """
    from synth.cli.render import print_json
    from synth.search.tools import render_documents

    world = _world(load_settings(), kg, corpus_file, passage_words)
    corpus = world.corpus
    [hits] = world.retriever(retriever).search([query], k)
    documents = [corpus.documents[hit.position] for hit in hits]
    if as_json:
        print_json([{**document.model_dump(), "score": hit.score} for document, hit in zip(documents, hits)])
    else:
        click.echo(render_documents(documents) or "No results.")


@search.command()
@world_options
@click.option(
    "--retriever",
    "retrievers",
    type=click.Choice(RETRIEVER_CHOICES),
    multiple=True,
    help="Which indexes to build (repeatable; default: bm25 and dense).",
)
@click.option(
    "--checkpoint-every",
    type=click.IntRange(1),
    default=4096,
    show_default=True,
    help="Documents embedded between checkpoints of the dense index: a killed build resumes from the last one.",
)
def index(kg, corpus_file, passage_words, retrievers, checkpoint_every) -> None:
    """Build (or find cached) the corpus indexes now, and print how long each took.

    The dense index shows progress with an ETA; a killed build resumes where it stopped when run again.
    """
    import time

    from synth.search.retrieval import DenseRetriever
    from synth.search.world import search_cache

    settings = load_settings()
    world = _world(settings, kg, corpus_file, passage_words)
    corpus = world.corpus
    for name in retrievers or ("bm25", "dense"):
        started = time.perf_counter()
        if name == "dense":
            built = DenseRetriever(corpus, search_cache(settings), log=_stderr, checkpoint_every=checkpoint_every)
        else:
            built = world.retriever(name)
        parts = [built, getattr(built, "sparse", None), getattr(built, "dense", None)]  # hybrid: both of its indexes
        folders = {
            path
            for part in parts
            for path in (getattr(part, "folder", None), getattr(getattr(part, "ann", None), "path", None))
        }
        on_disk = sum(_size(folder) for folder in folders if folder is not None) / 2**20
        click.echo(
            f"{name}: ready in {time.perf_counter() - started:.1f} s ({len(corpus):,} passages, corpus "
            f"{corpus.fingerprint}); "
            f"{on_disk:,.0f} MiB on disk, peak memory of this command so far {_peak_mib():,.0f} MiB"
        )


def _size(path: Path) -> int:
    return (
        path.stat().st_size
        if path.is_file()
        else sum(item.stat().st_size for item in path.rglob("*") if item.is_file())
    )


def _peak_mib() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


@search.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on (loopback by default).")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8000, show_default=True, help="Port (0 picks a free one)."
)
@world_options
@retriever_option
def serve(host, port, kg, corpus_file, passage_words, retriever) -> None:
    """Serve the retriever over HTTP in Search-R1's shape: POST /retrieve {"queries", "topk", "return_scores"}.

    Point Search-R1's or verl's search tool at http://HOST:PORT/retrieve to train on the very
    corpus the data was made from. Stop with Ctrl-C.
    """
    from synth.search.server import serve as run_server

    world = _world(load_settings(), kg, corpus_file, passage_words)
    ready = lambda line: click.echo(line, err=True)  # noqa: E731
    run_server(world.corpus, world.retriever(retriever), retriever, host, port, on_ready=ready)


@search.command()
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output .jsonl file.")
@world_options
def export(out, kg, corpus_file, passage_words) -> None:
    """Write the corpus as Search-R1 JSONL ({"id", "contents": "\\"Title\\"\\ntext"}), one passage a line, for
    other retrievers."""
    corpus = _world(load_settings(), kg, corpus_file, passage_words).corpus
    click.echo(f"wrote {corpus.write_jsonl(out):,} documents to {out}")

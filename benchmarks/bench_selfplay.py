"""Self-play throughput: proposer rollouts per minute and tokens/s against the raw backend on the
same requests, RAG verification questions/s, and the cheap gates' items/s.

    python benchmarks/bench_selfplay.py [--targets 16] [--searches 2] [--model embedded|fake] [--corpus FILE.jsonl]

On the bundled corpus (or a Search-R1 file): (1) the proposer on `--targets` targets through the
LLM client (empty cache: every turn is paid; every rollout its own coroutine), then the raw backend
answering every request the proposer made in one batch, its prefix cache emptied first; (2) the RAG judge on one
question per target, made
without a model (the target's first sentence with its name masked; evidence: the target's document
plus the top search hit for that sentence), with 2 distractors each; (3) format, leakage,
proposer-search and dedup gates on 20,000 such items. `--model fake` measures synth's own overhead.
"""

import argparse
import asyncio
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import peak_rss_mib, scratch_settings  # noqa: E402
from bench_distill import Recording, completion_tokens  # noqa: E402

from synth.filters.base import FilterChain  # noqa: E402
from synth.filters.dedup import ExactDedupFilter  # noqa: E402
from synth.filters.format import FormatFilter  # noqa: E402
from synth.filters.leakage import LeakageFilter  # noqa: E402
from synth.filters.proposer_searches import ProposerSearchFilter  # noqa: E402
from synth.filters.rag_verify import RAGConfig, RAGVerifier  # noqa: E402
from synth.generators.selfplay import Proposer, ProposerConfig, TargetConfig, eligible_targets, sample_targets  # noqa: E402
from synth.kg.snapshot import load_snapshot  # noqa: E402
from synth.llm.cache import ResponseCache  # noqa: E402
from synth.llm.client import LLMClient  # noqa: E402
from synth.llm.models import ModelPool  # noqa: E402
from synth.llm.types import ChatRequest, SamplingParams  # noqa: E402
from synth.run.flows_file import declared_models  # noqa: E402
from synth.schemas import Item, Provenance  # noqa: E402
from synth.search.corpus import Corpus  # noqa: E402
from synth.search.retrieval import BM25Retriever  # noqa: E402
from synth.search.tools import SearchTools  # noqa: E402


def masked_items(targets, tools, copies: int = 1) -> list[Item]:
    """One model-free question per target: its first sentence with the name masked."""
    items = []
    for copy in range(copies):
        for target in targets:
            sentence = re.split(r"(?<=\.)\s", target.text, maxsplit=1)[0]
            clue = re.sub(re.escape(target.answer), "this", sentence, flags=re.IGNORECASE).rstrip(".")
            hit = tools.search(clue, 1)
            evidence = list(dict.fromkeys([target.doc_id, *(document.id for document in hit)]))
            items.append(
                Item(
                    id=f"{target.doc_id}:{copy}",
                    question=f"Which one is described here: {clue}?",
                    answer=target.answer,
                    recipe="selfplay",
                    hops=2,
                    evidence_doc_ids=evidence,
                    provenance=Provenance(generator="bench"),
                    metadata={"proposer": {"queries": [f"{clue} {copy}", f"more about {clue}"]}},
                )
            )
    return items


def measure(arguments, settings) -> None:
    """Sync at the top: the RAG verifier is a filter, which runs its own event loop per batch."""
    corpus = Corpus.from_jsonl(Path(arguments.corpus)) if arguments.corpus else Corpus.from_kg(load_snapshot())
    tools = SearchTools(
        corpus, BM25Retriever(corpus, settings.cache_dir / "search", log=lambda line: None), default_k=3
    )
    targets = sample_targets(eligible_targets(corpus, TargetConfig()), 0, 0, arguments.targets)
    pool = ModelPool(settings, declared_models(None), log=lambda line: print(line, file=sys.stderr))
    backend = pool.backend(arguments.model)
    asyncio.run(
        backend.complete(
            [ChatRequest(messages=[{"role": "user", "content": "Hello"}], sampling=SamplingParams(max_tokens=4))]
        )
    )  # start-up
    recording = Recording(backend)
    client = LLMClient(recording, cache=ResponseCache(settings.llm_cache_path))

    proposer = Proposer(ProposerConfig(), client, tools, seed=0, corpus_name=corpus.name)
    started = time.perf_counter()
    proposals = asyncio.run(proposer.propose(targets, arguments.searches, round_index=0))
    seconds = time.perf_counter() - started
    summary = client.ledger.summary()
    hit_rate = getattr(backend, "prefix_cache_hit_rate", None)
    if hasattr(backend, "reset_prefix_cache"):
        backend.reset_prefix_cache()  # the raw replay must not reuse the prefixes the proposer computed
    started = time.perf_counter()
    raw = asyncio.run(backend.complete(recording.requests))
    raw_seconds = time.perf_counter() - started
    questions = sum(isinstance(p.outcome, Item) for p in proposals)
    print(
        f"model {backend.model_id}, protocol {proposer.protocol}, corpus {corpus.name} ({len(corpus)} documents), "
        f"{len(targets)} targets x {arguments.searches} searches asked, {len(recording.requests)} proposer requests"
    )
    print(
        f"proposer         {len(proposals) / seconds * 60:8.1f} proposals/min  "
        f"{summary['completion_tokens'] / seconds:8.1f} completion tok/s  "
        f"{summary['prompt_tokens'] / seconds:8.1f} prompt tok/s  ({seconds:.1f} s; {questions} wrote a question)"
    )
    print(
        f"raw backend      {len(recording.requests) / raw_seconds:8.2f} req/s  "
        f"{completion_tokens(raw) / raw_seconds:8.1f} completion tok/s  "
        f"({raw_seconds:.1f} s, same requests in one batch)"
    )
    print(
        f"proposer / raw   {raw_seconds / seconds:8.3f} (time ratio)"
        + (f"; proposer prefix-cache hit rate {hit_rate:.2f} of prompt tokens" if hit_rate is not None else "")
    )

    items = masked_items(targets, tools)
    verifier = RAGVerifier(RAGConfig(distractors=2), client, tools)
    started = time.perf_counter()
    verdicts = verifier.apply(items)
    rag_seconds = time.perf_counter() - started
    print(
        f"rag verification {len(items) / rag_seconds:8.2f} questions/s  ({rag_seconds:.1f} s; "
        f"{sum(v.kept for v in verdicts)}/{len(items)} verified)"
    )

    many = masked_items(targets, tools, copies=max(1, 20000 // max(1, len(targets))))
    chain = FilterChain(
        [FormatFilter(), LeakageFilter(lambda entity: entity), ProposerSearchFilter(2), ExactDedupFilter()]
    )
    started = time.perf_counter()
    kept = chain.run(many)
    gate_seconds = time.perf_counter() - started
    print(f"cheap gates      {len(many) / gate_seconds:8.0f} items/s  ({len(many)} items, {len(kept)} kept)")
    print(f"peak memory {peak_rss_mib():.0f} MiB")
    asyncio.run(pool.aclose())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=16)
    parser.add_argument("--searches", type=int, default=2, help="Searches the proposer is asked for.")
    parser.add_argument("--model", default="embedded", help="A declared model: embedded (vLLM) or fake.")
    parser.add_argument("--corpus", default=None, help="A Search-R1 JSONL corpus instead of the bundled graph's.")
    arguments = parser.parse_args()
    with scratch_settings() as settings:
        measure(arguments, settings)


if __name__ == "__main__":
    main()

"""`synth search serve`: the retriever over HTTP, in Search-R1's request/response shape, plus what
the exported verl tools need.

    POST /retrieve  {"queries": [...], "topk": 3, "return_scores": true}
      -> {"result": [[{"document": {"id", "contents", "title", "text"}, "score"}, ...], ...]}
         (one list per query; without return_scores, each hit is the document object itself)
    POST /open      {"ids": [...]}  -> {"result": [{"id", "contents", "title", "text"} | null, ...]}
    GET  /health    {"status": "ok", "documents": N, "retriever": "bm25", "corpus": NAME}

`contents` is Search-R1's `"Title"\\ntext`, so Search-R1's and verl's own search tools read the
results unchanged; `title` and `text` are what synth's contract renders (`synth.contract.portable`),
so RL rollouts see exactly the observations of the SFT data. aiohttp, which synth already uses for
model servers; searches run in a worker thread so the loop stays responsive.
"""

import asyncio
import json

from aiohttp import web

from synth.schemas import Document
from synth.search.corpus import Corpus, search_r1_contents
from synth.search.retrieval import Retriever

DEFAULT_TOPK = 3
MAX_TOPK = 100
MAX_IDS = 1_000


def document_payload(document: Document) -> dict:
    return {"id": document.id, "contents": search_r1_contents(document), "title": document.title, "text": document.text}


def make_app(corpus: Corpus, retriever: Retriever, retriever_name: str) -> web.Application:
    lock = asyncio.Lock()  # one search at a time: the indexes are not thread-safe

    async def retrieve(request: web.Request) -> web.Response:
        body = await _json_body(request)
        if isinstance(body, web.Response):
            return body
        queries = body.get("queries")
        if not isinstance(queries, list) or not all(isinstance(query, str) for query in queries):
            return _error(400, "`queries` must be a list of strings")
        topk = body.get("topk", DEFAULT_TOPK)
        if isinstance(topk, bool) or not isinstance(topk, int) or not 1 <= topk <= MAX_TOPK:
            return _error(400, f"`topk` must be an integer from 1 to {MAX_TOPK} (default {DEFAULT_TOPK}); got {topk!r}")
        with_scores = bool(body.get("return_scores", False))
        async with lock:
            rows = await asyncio.to_thread(retriever.search, queries, topk) if queries else []
        result = []
        for hits in rows:
            entries = []
            for hit in hits:
                payload = document_payload(corpus.documents[hit.position])
                entries.append({"document": payload, "score": hit.score} if with_scores else payload)
            result.append(entries)
        return web.json_response({"result": result})

    async def open_documents(request: web.Request) -> web.Response:
        body = await _json_body(request)
        if isinstance(body, web.Response):
            return body
        ids = body.get("ids")
        if not isinstance(ids, list) or not all(isinstance(doc_id, str) for doc_id in ids) or len(ids) > MAX_IDS:
            return _error(400, f"`ids` must be a list of at most {MAX_IDS} document ids (strings)")
        documents = [corpus.document(doc_id) for doc_id in ids]
        return web.json_response(
            {"result": [document_payload(document) if document else None for document in documents]}
        )

    async def health(_: web.Request) -> web.Response:
        return web.json_response(
            {"status": "ok", "documents": len(corpus), "retriever": retriever_name, "corpus": corpus.name}
        )

    app = web.Application(client_max_size=16 * 2**20)
    app.router.add_post("/retrieve", retrieve)
    app.router.add_post("/open", open_documents)
    app.router.add_get("/health", health)
    return app


async def _json_body(request: web.Request) -> dict | web.Response:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        return _error(400, 'the body is not JSON; send a JSON object, e.g. {"queries": [...], "topk": 3}')
    if not isinstance(body, dict):
        return _error(400, "the body must be a JSON object")
    return body


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def serve(corpus: Corpus, retriever: Retriever, retriever_name: str, host: str, port: int, on_ready=print) -> None:
    """Serve until interrupted."""

    async def main() -> None:
        runner = web.AppRunner(make_app(corpus, retriever, retriever_name), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None)
        bound = sockets[0].getsockname()[1] if sockets else port
        on_ready(
            f"serving {len(corpus):,} documents ({retriever_name}) at http://{host}:{bound}/retrieve (and /open, "
            "/health)"
        )
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())

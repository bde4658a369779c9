"""`synth search serve`: the retriever over HTTP in Search-R1's request/response shape.

    POST /retrieve  {"queries": [...], "topk": 3, "return_scores": true}
      -> {"result": [[{"document": {"id", "contents"}, "score"}, ...], ...]}
         (without return_scores, each hit is the document object itself)
    GET  /health    {"status": "ok", "documents": N, "retriever": "bm25"}

so an RL trainer's search tool can query the very corpus the data was made from. aiohttp, which
synth already uses for model servers; searches run in a worker thread so the loop stays responsive.
"""

import asyncio
import json

from aiohttp import web

from synth.search.corpus import Corpus, search_r1_contents
from synth.search.retrieval import Retriever

DEFAULT_TOPK = 3
MAX_TOPK = 100


def make_app(corpus: Corpus, retriever: Retriever, retriever_name: str) -> web.Application:
    lock = asyncio.Lock()  # one search at a time: the indexes are not thread-safe

    async def retrieve(request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            return _error(400, "the body is not JSON; send {\"queries\": [...], \"topk\": 3}")
        queries = body.get("queries") if isinstance(body, dict) else None
        if not isinstance(queries, list) or not all(isinstance(query, str) for query in queries):
            return _error(400, "`queries` must be a list of strings")
        topk = body.get("topk") or DEFAULT_TOPK
        if not isinstance(topk, int) or not 1 <= topk <= MAX_TOPK:
            return _error(400, f"`topk` must be an integer from 1 to {MAX_TOPK}")
        with_scores = bool(body.get("return_scores", False))
        async with lock:
            rows = await asyncio.to_thread(retriever.search, queries, topk) if queries else []
        result = []
        for hits in rows:
            entries = []
            for hit in hits:
                document = corpus.documents[hit.position]
                payload = {"id": document.id, "contents": search_r1_contents(document)}
                entries.append({"document": payload, "score": hit.score} if with_scores else payload)
            result.append(entries)
        return web.json_response({"result": result})

    async def health(_: web.Request) -> web.Response:
        return web.json_response({"status": "ok", "documents": len(corpus), "retriever": retriever_name, "corpus": corpus.name})

    app = web.Application(client_max_size=16 * 2**20)
    app.router.add_post("/retrieve", retrieve)
    app.router.add_get("/health", health)
    return app


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


def serve(corpus: Corpus, retriever: Retriever, retriever_name: str, host: str, port: int, on_ready=print) -> None:
    """Serve until interrupted."""
    async def main() -> None:
        runner = web.AppRunner(make_app(corpus, retriever, retriever_name), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port)
        await site.start()
        bound = site._server.sockets[0].getsockname()[1] if site._server and site._server.sockets else port
        on_ready(f"serving {len(corpus):,} documents ({retriever_name}) at http://{host}:{bound}/retrieve")
        try:
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())

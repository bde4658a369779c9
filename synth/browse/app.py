"""`synth browse`: a local, read-only web app over the store (Starlette, Jinja2 templates).

Every page is rendered on the server from `StoreView` reads; templates escape every value
(questions, answers and trajectories are untrusted text), and nothing is fetched from a CDN: the
one stylesheet ships in this package. The app has no route that writes.
"""

import json
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from synth.browse.data import PAGE_SIZE, ItemFilter, StoreView
from synth.errors import NotFoundError, SynthError
from synth.settings import Settings
from synth.store.query import run_query

HERE = Path(__file__).resolve().parent
SQL_ROWS = 500
"""Rows the console shows at most (the total is counted and said)."""
SQL_TIMEOUT_S = 20.0


def _arguments(raw: object) -> str:
    """A tool call's arguments, pretty-printed when they are JSON (they are a model's text: shown as is otherwise)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return json.dumps(raw, indent=2, ensure_ascii=False)


def make_app(settings: Settings, page_size: int = PAGE_SIZE) -> Starlette:
    """The app over `settings`' data root; `page_size`: rows per page of the items table."""
    store = StoreView(settings)
    templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html templates

    def page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
        return templates.TemplateResponse(request, template, context, status_code=status)

    def missing(request: Request, what: str) -> Response:
        return page(request, "missing.html", status=404, what=what)

    async def index(request: Request) -> Response:
        versions = store.versions()
        datasets: dict[str, list] = {}
        for version in versions:
            datasets.setdefault(version.name, []).append(version)
        return page(request, "index.html", datasets=datasets)

    async def version(request: Request) -> Response:
        ref = request.path_params["ref"]
        try:
            found = store.version(ref)
        except NotFoundError:
            return missing(request, f"version {ref}")
        return page(request, "version.html", version=found)

    async def items(request: Request) -> Response:
        ref = request.path_params["ref"]
        try:
            found = store.version(ref)
        except NotFoundError:
            return missing(request, f"version {ref}")
        query = request.query_params
        hops = query.get("hops", "")
        where = ItemFilter(
            text=query.get("q", "")[:200],
            hops=int(hops) if hops.isdigit() else None,
            difficulty=query.get("difficulty", "")[:40],
        )
        number = query.get("page", "1")
        listing = store.items(found, where, int(number) if number.isdigit() else 1, page_size)
        return page(request, "items.html", version=found, page=listing, where=where)

    async def item(request: Request) -> Response:
        ref, item_id = request.path_params["ref"], request.path_params["item_id"]
        try:
            found = store.version(ref)
        except NotFoundError:
            return missing(request, f"version {ref}")
        record = store.item(found, item_id)
        if record is None:
            return missing(request, f"item {item_id} in {found.ref}")
        return page(
            request,
            "item.html",
            version=found,
            item=record,
            attempts=store.attempts(found, item_id),
            verdicts=store.verdicts(found, item_id),
            trajectories=store.trajectories_of(found, item_id),
        )

    async def trajectory(request: Request) -> Response:
        ref, trajectory_id = request.path_params["ref"], request.path_params["trajectory_id"]
        try:
            found = store.version(ref)
        except NotFoundError:
            return missing(request, f"version {ref}")
        record = store.trajectory(found, trajectory_id)
        if record is None:
            return missing(request, f"trajectory {trajectory_id} in {found.ref}")
        return page(request, "trajectory.html", version=found, trajectory=record, arguments=_arguments)

    async def sql(request: Request) -> Response:
        """The read-only console: `synth sql`'s sandbox and rules, a bounded result."""
        text = request.query_params.get("q", "").strip()[:10_000]
        result, error = None, None
        if text:
            try:
                result = run_query(settings, text, limit=SQL_ROWS, timeout_s=SQL_TIMEOUT_S)
            except SynthError as refused:
                error = str(refused)
        return page(request, "sql.html", text=text, result=result, error=error, shown=SQL_ROWS)

    async def not_found(request: Request, error: Exception) -> Response:
        return HTMLResponse("not found", status_code=404)

    return Starlette(
        routes=[
            Route("/", index),
            Route("/sql", sql),
            Route("/v/{ref}", version),
            Route("/v/{ref}/items", items),
            Route("/v/{ref}/items/{item_id}", item),
            Route("/v/{ref}/trajectories/{trajectory_id}", trajectory),
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ],
        exception_handlers={404: not_found},
    )

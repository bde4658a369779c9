"""`synth browse`: a local, read-only web app over the store (Starlette, Jinja2 templates).

Every page is rendered on the server from `StoreView` reads; templates escape every value
(questions, answers and trajectories are untrusted text), and nothing is fetched from a CDN: the
one stylesheet ships in this package. The app has no route that writes. Pages are plain functions,
which Starlette runs in its thread pool, so one slow query (a console query may take 20 s) does not
hold up the other pages; each query runs in a private database (synth.store.sandbox), so none can
touch another's connection or the catalog file. Who may use the page at all: synth.browse.guard.
"""

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from synth.browse.construction import draw
from synth.browse.data import PAGE_SIZE, ItemFilter, StoreView
from synth.browse.diff import diff_versions
from synth.browse.evals import eval_attempt, side_by_side
from synth.browse.guard import LOOPBACK_NAMES, BadRequest, SecurityHeaders, cross_site, form_field, whole_number
from synth.errors import NotFoundError, SynthError
from synth.evaluation.comparison import comparison
from synth.schemas import DatasetVersion, EvalRun, Item
from synth.settings import Settings
from synth.solving.trajectory_reading import labels_by_call
from synth.store.arrow_schema import from_row
from synth.store.audits import item_ratings, version_audits
from synth.store.card import shown
from synth.store.evals import list_runs, load_run
from synth.store.query import run_query
from synth.store.sandbox import WEB_BOUNDS

HERE = Path(__file__).resolve().parent
SQL_ROWS = 500
"""Rows the console shows at most (the total is counted and said)."""
SQL_TIMEOUT_S = 20.0
SQL_CELL_CHARS = 2_000
"""Characters of one value the console shows (the rest is said to be cut)."""
LABELS = ["trivial", "easy", "medium", "hard", "unsolved", "unlabeled"]
"""Difficulty labels in the order the label-by-hops chart stacks them."""


class Missing(Exception):
    """A version, item or trajectory the store does not have: the page says which, with a 404."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def _arguments(raw: object) -> str:
    """A tool call's arguments, pretty-printed when they are JSON (they are a model's text: shown as is otherwise)."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError:
            return raw
    return json.dumps(raw, indent=2, ensure_ascii=False)


def _resolve(store: StoreView, ref: str) -> DatasetVersion:
    """The version `ref` names, or `Missing` (a 404 page)."""
    try:
        return store.version(ref)
    except NotFoundError:
        raise Missing(f"version {ref}") from None


def _eval_run(settings: Settings, eval_id: str) -> EvalRun:
    try:
        return load_run(settings, eval_id)
    except NotFoundError:
        raise Missing(f"eval {eval_id}") from None


def make_app(
    settings: Settings, page_size: int = PAGE_SIZE, allowed_hosts: Iterable[str] = LOOPBACK_NAMES
) -> Starlette:
    """The app over `settings`' data root; `page_size`: rows per page of the items table;
    `allowed_hosts`: the names a request's Host header may give (loopback only by default, so a page
    on another site that rebinds its DNS name to 127.0.0.1 gets a 400, not the data)."""
    store = StoreView(settings)
    templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes .html templates

    def page(request: Request, template: str, status: int = 200, **context: Any) -> Response:
        return templates.TemplateResponse(request, template, context, status_code=status)

    def version_of(request: Request) -> DatasetVersion:
        """The version the path names, or a 404 page (`Missing`)."""
        return _resolve(store, request.path_params["ref"])

    def index(request: Request) -> Response:
        datasets: dict[str, list] = {}
        for version in store.versions():
            datasets.setdefault(version.name, []).append(version)
        return page(request, "index.html", datasets=datasets)

    def version(request: Request) -> Response:
        found = version_of(request)
        return page(
            request,
            "version.html",
            version=found,
            mix=store.labels_by_hops(found),
            labels=LABELS,
            previous=store.previous(found),
            audits=version_audits(settings, found.name, found.version),
            shown=shown,
        )

    def items(request: Request) -> Response:
        found, query = version_of(request), request.query_params
        where = ItemFilter(
            text=query.get("q", "")[:200],
            hops=whole_number(query, "hops"),
            difficulty=query.get("difficulty", "")[:40],
            style=query.get("style", "")[:80],
            family=query.get("family", "")[:200],
        )
        listing = store.items(found, where, whole_number(query, "page") or 1, page_size)
        return page(request, "items.html", version=found, page=listing, where=where)

    def item(request: Request) -> Response:
        found, item_id = version_of(request), request.path_params["item_id"]
        record = store.item(found, item_id)
        if record is None:
            raise Missing(f"item {item_id} in {found.ref}")
        parsed = from_row(Item, record)
        return page(
            request,
            "item.html",
            version=found,
            item=record,
            drawing=draw(parsed, store.entity_name(found), store.relation_phrase(found)),
            passages=store.passages(found, parsed.evidence_doc_ids),
            attempts=store.attempts(found, item_id),
            verdicts=store.verdicts(found, item_id),
            trajectories=store.trajectories_of(found, item_id),
            graph=store.graph(found),
            ratings=item_ratings(settings, found.name, found.version, item_id),
        )

    def trajectory(request: Request) -> Response:
        found, trajectory_id = version_of(request), request.path_params["trajectory_id"]
        record = store.trajectory(found, trajectory_id)
        if record is None:
            raise Missing(f"trajectory {trajectory_id} in {found.ref}")
        steps = labels_by_call(record.messages, record.step_labels)
        return page(request, "trajectory.html", version=found, trajectory=record, arguments=_arguments, steps=steps)

    def diff(request: Request) -> Response:
        """Two versions' items compared (added, removed, relabeled); without both, a form to pick them."""
        old_ref, new_ref = request.query_params.get("old", ""), request.query_params.get("new", "")
        if not (old_ref and new_ref):
            return page(request, "diff_pick.html", versions=store.versions(), old=old_ref, new=new_ref)
        old, new = (_resolve(store, ref) for ref in (old_ref, new_ref))
        return page(request, "diff.html", diff=diff_versions(settings, old, new), labels=LABELS)

    def evals(request: Request) -> Response:
        return page(request, "evals.html", runs=list_runs(settings))

    def evals_compare(request: Request) -> Response:
        wanted = request.query_params.getlist("id")
        if not wanted:
            return RedirectResponse("/evals", status_code=303)
        runs = [_eval_run(settings, eval_id) for eval_id in wanted[:8]]
        columns, rows = comparison(runs)
        return page(
            request, "eval_compare.html", runs=runs, columns=columns, rows=rows, side=side_by_side(settings, runs)
        )

    def eval_attempt_page(request: Request) -> Response:
        run = _eval_run(settings, request.path_params["eval_id"])
        item_id, sample = request.path_params["item_id"], request.path_params["sample"]
        attempt = eval_attempt(settings, run, item_id, sample)
        if attempt is None:
            raise Missing(f"attempt {sample} on {item_id} in eval {run.id}")
        return page(request, "eval_attempt.html", run=run, attempt=attempt, arguments=_arguments)

    def sql_form(request: Request) -> Response:
        """The console's form; `?q=` fills it (a link from another page) but runs nothing: a query
        runs only when the form is posted from this site."""
        text = request.query_params.get("q", "")[: WEB_BOUNDS.text_chars]
        return page(request, "sql.html", text=text, result=None, error=None, shown=SQL_ROWS, cell=SQL_CELL_CHARS)

    async def sql_run(request: Request) -> Response:
        """The read-only console: `synth sql`'s sandbox, rules and the web's bounds, posted same-origin."""
        refusal = cross_site(request)
        if refusal:
            return PlainTextResponse(refusal, status_code=403)
        text = (await form_field(request, "q", WEB_BOUNDS.text_chars)).strip()
        result, error = None, None
        if text:
            try:
                result = await run_in_threadpool(
                    run_query, settings, text, limit=SQL_ROWS, timeout_s=SQL_TIMEOUT_S, bounds=WEB_BOUNDS
                )
            except SynthError as refused:
                error = str(refused)
        return page(request, "sql.html", text=text, result=result, error=error, shown=SQL_ROWS, cell=SQL_CELL_CHARS)

    async def not_found(request: Request, error: Exception) -> Response:
        what = error.what if isinstance(error, Missing) else "such page"
        return page(request, "missing.html", status=404, what=what)

    async def bad_request(request: Request, error: Exception) -> Response:
        return PlainTextResponse(f"bad request: {error}", status_code=400)

    async def unreadable(request: Request, error: Exception) -> Response:
        """A damaged version (or another store error) is said on the page; the rest of the store still browses."""
        return page(request, "unreadable.html", status=500, message=str(error))

    return Starlette(
        routes=[
            Route("/", index),
            Route("/sql", sql_form, methods=["GET"]),
            Route("/sql", sql_run, methods=["POST"]),
            Route("/v/{ref}", version),
            Route("/v/{ref}/items", items),
            Route("/v/{ref}/items/{item_id}", item),
            Route("/v/{ref}/trajectories/{trajectory_id}", trajectory),
            Route("/diff", diff),
            Route("/evals", evals),
            Route("/evals/compare", evals_compare),
            Route("/evals/{eval_id}/attempts/{item_id}/{sample:int}", eval_attempt_page),
            Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
        ],
        exception_handlers={404: not_found, Missing: not_found, SynthError: unreadable, BadRequest: bad_request},
        middleware=[
            Middleware(TrustedHostMiddleware, allowed_hosts=list(allowed_hosts), www_redirect=False),
            Middleware(SecurityHeaders),
        ],
    )

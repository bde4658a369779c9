"""What keeps `synth browse` a page only the local user's browser can use.

- Host allow-list (Starlette's TrustedHostMiddleware, given `allowed_hosts`): a DNS-rebinding page
  reaches the server under its own name, which is not on the list.
- The console runs a query only on a POST from this site: `cross_site` refuses a request whose
  browser says it came from elsewhere (Sec-Fetch-Site, else Origin). A program that sends neither
  header is a local program, which could read the data root itself.
- Every response says what a browser may do with it (`SecurityHeaders`): scripts, styles and images
  from this server only, never framed, never sniffed into another type, no referrer sent to other
  sites (not `no-referrer`: with it, Chromium sends `Origin: null` on the page's own POST).
- Query strings are checked before use: a malformed number is a 400, not a 500.
"""

from urllib.parse import parse_qs

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
"""As a Host header names them (Starlette keeps the brackets of an IPv6 literal)."""
HEADERS = {
    "content-security-policy": (
        "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}


class BadRequest(Exception):
    """A malformed request: answered 400 with the reason."""


class SecurityHeaders:
    """Adds `HEADERS` to every HTTP response (pure ASGI: no body buffering)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)


def cross_site(request: Request) -> str | None:
    """Why a state-reading POST must be refused as coming from another site, or None.

    Browsers send Sec-Fetch-Site on every request (same-origin for this page's own form) and Origin
    on every POST; either, when present, must name this site."""
    fetch_site = request.headers.get("sec-fetch-site")
    if fetch_site is not None and fetch_site not in ("same-origin", "none"):
        return f"refused: the console runs queries posted from its own page only (Sec-Fetch-Site: {fetch_site})"
    origin = request.headers.get("origin")
    if origin is not None:
        own = f"{request.url.scheme}://{request.headers.get('host', '')}"
        if origin.lower() != own.lower():
            return f"refused: the console runs queries posted from its own page only (Origin: {origin[:100]})"
    return None


async def form_field(request: Request, name: str, max_chars: int) -> str:
    """Field `name` of a posted urlencoded form, read up to a bound (BadRequest past it)."""
    limit = max_chars * 12 + 1_024  # a character may take 12 bytes percent-encoded (4 UTF-8 bytes as %XX)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BadRequest(f"the form is over {limit:,} bytes; a query may have {max_chars:,} characters")
    try:
        fields = parse_qs(body.decode("utf-8"), max_num_fields=8, strict_parsing=False, errors="strict")
    except (UnicodeDecodeError, ValueError) as error:
        raise BadRequest(f"the form is not valid urlencoded UTF-8 ({error})") from None
    value = fields.get(name, [""])[0]
    if len(value) > max_chars:
        raise BadRequest(f"the query is {len(value):,} characters, over the {max_chars:,} a query may have")
    return value


def whole_number(query, name: str) -> int | None:
    """Query parameter `name` as a non-negative integer, None when absent or empty; BadRequest otherwise
    (`str.isdigit` accepts "²", which `int` then refuses)."""
    raw = query.get(name, "")
    if not raw:
        return None
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 9:
        raise BadRequest(f"{name}={raw[:20]!r} is not a whole number")
    return int(raw)

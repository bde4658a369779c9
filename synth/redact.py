"""One redaction for every string that leaves synth: the configured API keys, and anything shaped
like a credential (an Authorization header, an api-key field, an `sk-...` key), become `***`.

A server (or a proxy in front of it) may echo the request's Authorization header in an error body;
that body becomes an error message, a failure record, a run's `error` in the catalog and a line on
stderr. Keys are registered when a client is built from them (`register`), and the failure text is
redacted where it is made (the HTTP client) and again where text leaves (the CLI's error line, the
run records, log records), so a key that reaches a message some other way is caught too.
"""

import logging
import re
from collections.abc import Callable
from typing import Any

MASK = "***"
_SECRETS: set[str] = set()
_MIN_SECRET = 6
"""Shorter values are not treated as secrets: masking them would blank ordinary words."""

_PATTERNS = (
    # Authorization: Bearer KEY / "authorization": "Basic KEY" / authorization=KEY
    re.compile(r"(?i)(\bauthorization\b[\"']?\s*[:=]\s*[\"']?\s*(?:bearer\s+|basic\s+|token\s+)?)[^\s\"',;}]+"),
    # api-key: KEY / "api_key": "KEY" / x-api-key=KEY
    re.compile(r"(?i)(\b(?:x-)?api[-_]?key\b[\"']?\s*[:=]\s*[\"']?)[^\s\"',;}]+"),
    # a bare bearer token
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    # OpenAI-style keys anywhere
    re.compile(r"()\bsk-[A-Za-z0-9_-]{16,}"),
)


def register(secret: str | None) -> None:
    """Redact `secret` from every text from now on (an API key a client was built with)."""
    if secret and len(secret) >= _MIN_SECRET:
        _SECRETS.add(secret)


def redact(text: str) -> str:
    """`text` with every registered secret and every credential-shaped value masked."""
    if not isinstance(text, str) or not text:
        return text
    for secret in sorted(_SECRETS, key=len, reverse=True):
        if secret in text:
            text = text.replace(secret, MASK)
    for pattern in _PATTERNS:
        text = pattern.sub(lambda match: match.group(1) + MASK, text)
    return text


def map_strings(value: Any, change: Callable[[str], str]) -> Any:
    """`change` applied to every string of a JSON-like value (dicts, lists, tuples), keys included."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, dict):
        return {map_strings(key, change): map_strings(item, change) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(map_strings(item, change) for item in value)
    return value


def redact_value(value: Any) -> Any:
    """`redact` through the strings of a JSON-like value (dicts, lists), keys included."""
    return map_strings(value, redact)


class RedactingFilter(logging.Filter):
    """A logging filter that redacts each record's message (arguments merged in first)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install_logging_filter() -> None:
    """Redact every record that reaches the root logger's handlers (and those added later to it)."""
    root = logging.getLogger()
    if not any(isinstance(existing, RedactingFilter) for existing in root.filters):
        root.addFilter(RedactingFilter())
    for handler in root.handlers:
        if not any(isinstance(existing, RedactingFilter) for existing in handler.filters):
            handler.addFilter(RedactingFilter())

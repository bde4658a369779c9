"""Read rendered search results back into documents, so a trajectory recorded under one contract
can be shown under another (`synth.contract.render`). Each parser inverts one style of
`portable.render_search` and returns None for text that is not in that style.

The searchr1 and verl styles carry no document ids, so only their titles and texts come back;
rendering them in the synth style (which shows ids) is refused upstream.
"""

import json
import re

from synth.contract.portable import numbered, parse_synth

_SEARCHR1_DOC = re.compile(r'^Doc (\d+)\(Title: "(.*?)"\) ', re.MULTILINE)
_VERL_DOC = re.compile(r'^Doc (\d+) \(Title: "(.*?)"\)\n', re.MULTILINE)


def parse_searchr1(text: str) -> list[list[dict]] | None:
    if text == "":
        return [[]]
    documents = numbered(_SEARCHR1_DOC, text, "\n")
    if documents is None:
        return None
    return [[{"id": None, "title": match.group(2), "text": body} for match, body in documents]]


def parse_verl(text: str) -> list[list[dict]] | None:
    try:
        payload = json.loads(text)
    except json.JSONDecodeError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("result"), str):
        return None
    results = []
    for block in payload["result"].split("\n---\n"):
        if block == "":
            results.append([])
            continue
        documents = numbered(_VERL_DOC, block, "\n\n")
        if documents is None:
            return None
        results.append([{"id": None, "title": match.group(2), "text": body} for match, body in documents])
    return results


PARSERS = {"synth": parse_synth, "searchr1": parse_searchr1, "verl": parse_verl}


def parse_search(text: str, style: str | None) -> tuple[str, list[list[dict]]] | None:
    """(style, documents per query) of a search result in `style`, or in whichever style parses when
    `style` is None (a trajectory imported from elsewhere); None when no style does."""
    for name in [style] if style else list(PARSERS):
        parsed = PARSERS[name](text)
        if parsed is not None:
            return name, parsed
    return None

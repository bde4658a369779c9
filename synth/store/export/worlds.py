"""The worlds an RL export's rows search: one for a version made in one world, one per distinct world
for a `synth mix` of versions made in several (a KG set and a corpus set).

A world is what `synth search serve` serves: a graph's corpus or a corpus file, cut and searched
the way the data was made. Each world of an export gets its own retriever URL (the first is
`--retrieval-url`, the others the ports after it unless `--world-url NAME=URL` says otherwise),
and each row names its world: verl's tools read the URL from the row's `create_kwargs`, so a row's
search goes to its own world under the tool names the SFT rows teach, and TRL's multi-environment
mode reads the row's `environment` column.
"""

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse, urlunparse

from synth.errors import ConfigError
from synth.store.catalog import Catalog
from synth.store.export.options import ExportRequest
from synth.store.version_world import world_key


@dataclass(frozen=True)
class ExportWorld:
    name: str
    """A short label users pass to --world-url: kg-NAME, kg-bundled or corpus-FILESTEM."""
    serve: str
    """The `synth search serve` arguments that serve it."""
    url: str


def _name(key: tuple) -> str:
    kg, corpus, _, _ = key
    if corpus:
        return f"corpus-{Path(corpus).stem}"
    return f"kg-{kg}" if kg else "kg-bundled"


def _serve(key: tuple, port: int) -> str:
    kg, corpus, passage_words, retriever = key
    arguments = [f"--port {port}"]
    arguments += [f"--corpus {corpus}"] if corpus else [f"--kg {kg}"] if kg else []
    arguments += [f"--passage-words {passage_words}"] if corpus and passage_words is not None else []
    arguments += [f"--retriever {retriever}"] if retriever != "bm25" else []
    return "synth search serve " + " ".join(arguments)


def export_worlds(request: ExportRequest, given: dict[str, str]) -> dict[str, ExportWorld]:
    """Source version ref -> its world, for a mixture of versions made in more than one world; {}
    otherwise (every row searches --retrieval-url, as always)."""
    sources = [source["ref"] for source in ((request.version.config or {}).get("mix") or {}).get("sources", [])]
    keys = {}
    if sources:
        with Catalog.open(request.settings, read_only=True) as catalog:
            keys = {ref: world_key(catalog.resolve(ref).config) for ref in sources}
    distinct = list(dict.fromkeys(keys.values()))
    if len(distinct) <= 1:
        if given:
            raise ConfigError(f"--world-url is for a synth mix of several worlds; {request.version.ref} is one world")
        return {}
    names = [_name(key) for key in distinct]
    if len(set(names)) < len(names):  # two worlds of one graph or file, searched differently
        names = [f"{name}-{number}" for number, name in enumerate(names)]
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise ConfigError(f"--world-url names {', '.join(unknown)}; this mixture's worlds are {', '.join(names)}")
    base = urlparse(request.retrieval_url)
    worlds = {}
    for number, (key, name) in enumerate(zip(distinct, names, strict=True)):
        port = (base.port or 80) + number
        url = given.get(name) or urlunparse(base._replace(netloc=f"{base.hostname}:{port}"))
        worlds[key] = ExportWorld(name, _serve(key, urlparse(url).port or port), url.rstrip("/"))
    return {ref: worlds[key] for ref, key in keys.items()}


def parse_world_urls(texts: list[str] | tuple[str, ...] | None) -> dict[str, str]:
    """'NAME=URL' each (--world-url)."""
    found = {}
    for text in texts or ():
        name, _, url = text.partition("=")
        if not name or not urlparse(url).netloc:
            raise ConfigError(f"--world-url {text!r} is not NAME=URL, e.g. corpus-wiki=http://127.0.0.1:8001")
        found[name.strip()] = url.strip()
    return found

"""An RL export of a mixture of two worlds (two corpora): every row names its world, its tools'
create_kwargs carry that world's server, the note says how to serve each, and both trainers'
tools reach the row's own world: verl's tools (the exported synth_verl_tools, loaded on a stand-in
of the two verl classes it imports, which the verl check in examples/ runs on the real ones) and
TRL's environments (one class per world, picked by the row's `environment`)."""

import asyncio
import importlib.util
import sys
import types
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from synth.errors import ConfigError
from synth.store.export import export_version
from synth.store.mixture import MixRequest, mix, parse_sources
from synth.store.publish import VersionSpec, publish_version

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
from search_server import search_server  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
HARBOUR = FIXTURES / "corpus" / "mini.jsonl"


@pytest.fixture
def two_worlds(settings, make_item, tmp_path):
    """a@1 made on the mini corpus, b@1 on a corpus of its own (a document only it holds)."""
    other = tmp_path / "orchard.jsonl"
    other.write_text('{"id": "o1", "contents": "\\"Quince Orchard\\"\\nQuince Orchard is a farm near Velmora."}\n')
    for name, corpus, offset in (("a", HARBOUR, 0), ("b", other, 100)):
        items = [make_item(offset + index) for index in range(20)]
        config = {"world": {"corpus": str(corpus)}}
        publish_version(settings, VersionSpec(name=name, recipe="selfplay", config=config), {"items": items})
    mix(settings, MixRequest("both", parse_sources(["a=0.5", "b=0.5"]), n=40), log=lambda line: None)
    return settings, other


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _verl_stand_in(monkeypatch):
    """verl.tools.base_tool.BaseTool and verl.tools.schemas.ToolResponse as verl 0.9.1 defines what
    synth's tools use of them: create (an id), release, the schema, a response with text."""

    class ToolResponse:
        def __init__(self, text=None, **kwargs):
            self.text = text

    class BaseTool:
        def __init__(self, config, tool_schema):
            self.config, self.tool_schema = config, tool_schema

        async def create(self, instance_id=None, **kwargs):
            return instance_id or f"instance-{id(kwargs)}", ToolResponse()

        async def release(self, instance_id, **kwargs):
            return None

    for module, value in (("verl.tools.base_tool", BaseTool), ("verl.tools.schemas", ToolResponse)):
        stand_in = types.ModuleType(module)
        setattr(stand_in, value.__name__, value)
        monkeypatch.setitem(sys.modules, module, stand_in)
    monkeypatch.setitem(sys.modules, "verl", types.ModuleType("verl"))
    monkeypatch.setitem(sys.modules, "verl.tools", types.ModuleType("verl.tools"))


def test_each_row_searches_its_own_world_in_verl_and_trl(two_worlds, tmp_path, monkeypatch):
    settings, other = two_worlds
    with (
        search_server(tmp_path / "home-a", "--corpus", str(HARBOUR)) as url_a,
        search_server(tmp_path / "home-b", "--corpus", str(other)) as url_b,
    ):
        a, b = url_a.removesuffix("/retrieve"), url_b.removesuffix("/retrieve")
        out = tmp_path / "rl" / "train.parquet"
        result = export_version(
            settings, "both", "verl", out, split="all", world_url=[f"corpus-mini={a}", f"corpus-orchard={b}"]
        )
        note = next(note for note in result.notes if note.startswith("the rows search 2 worlds"))
        assert "corpus-mini: synth search serve --port" in note and f"--corpus {HARBOUR}" in note
        rows = pq.read_table(out).to_pylist()
        by_world = {row["environment"]: row for row in rows}
        assert set(by_world) == {"corpus-mini", "corpus-orchard"}
        for row in rows:
            assert row["extra_info"]["world"] == row["environment"]
            urls = {
                kwargs["create_kwargs"]["retrieval_service_url"]
                for kwargs in row["extra_info"]["tools_kwargs"].values()
            }
            assert urls == {a if row["environment"] == "corpus-mini" else b}
        sources = {row["extra_info"]["item_id"]: row["environment"] for row in rows}
        assert sorted(sources.values()).count("corpus-mini") == 20

        _verl_stand_in(monkeypatch)
        monkeypatch.syspath_prepend(str(out.parent))
        monkeypatch.delenv("SYNTH_RETRIEVAL_URL", raising=False)
        tools = _load(out.parent / "synth_verl_tools.py", "synth_verl_tools")
        import yaml

        entry = yaml.safe_load((out.parent / "tool_config.yaml").read_text())["tools"][0]
        schema = types.SimpleNamespace(
            function=types.SimpleNamespace(parameters=types.SimpleNamespace(properties={"query": {}}))
        )
        search = tools.SearchTool(entry["config"], schema)

        async def verl_search(row: dict, query: str) -> str:
            kwargs = row["extra_info"]["tools_kwargs"]["search"]
            instance, _ = await search.create(create_kwargs=kwargs["create_kwargs"])  # as verl 0.9.1 calls it
            try:
                response, _, _ = await search.execute(instance, {"query": query})
                return response.text
            finally:
                await search.release(instance)

        assert "Quince Orchard" in asyncio.run(verl_search(by_world["corpus-orchard"], "Quince Orchard farm"))
        assert "Quince Orchard" not in asyncio.run(verl_search(by_world["corpus-mini"], "Quince Orchard farm"))
        assert not search.row_urls  # released

        script = _load(out.parent / "synth_trl_grpo.py", "synth_trl_grpo")
        factories = script.environment_factories(out.parent / "synth_worlds.yaml")
        assert set(factories) == {"corpus-mini", "corpus-orchard"}
        orchard = factories["corpus-orchard"]()
        orchard.reset(**by_world["corpus-orchard"])
        assert "Quince Orchard" in orchard.search(query="Quince Orchard farm")
        harbour = factories["corpus-mini"]()
        harbour.reset(**by_world["corpus-mini"])
        assert "Grey Harbour" in harbour.search(query="Grey Harbour")


def test_world_urls_are_checked_and_one_world_needs_none(two_worlds, settings, tmp_path):
    with pytest.raises(ConfigError, match="this mixture's worlds are corpus-mini, corpus-orchard"):
        export_version(settings, "both", "verl", tmp_path / "x.parquet", world_url=["nowhere=http://127.0.0.1:9"])
    with pytest.raises(ConfigError, match="is not NAME=URL"):
        export_version(settings, "both", "verl", tmp_path / "x.parquet", world_url=["corpus-mini"])
    with pytest.raises(ConfigError, match="is one world"):
        export_version(settings, "a", "verl", tmp_path / "x.parquet", world_url=["corpus-mini=http://127.0.0.1:9"])
    with pytest.raises(ConfigError, match="mixes 2 worlds .* Search-R1's trainer searches one retriever"):
        export_version(settings, "both", "searchr1", tmp_path / "s.parquet")
    assert not (tmp_path / "s.parquet").exists()
    result = export_version(settings, "both", "verl", tmp_path / "d" / "rl.parquet", split="all")
    note = next(note for note in result.notes if note.startswith("the rows search 2 worlds"))
    assert "--port 8000 --corpus" in note and "--port 8001 --corpus" in note  # the ports after --retrieval-url

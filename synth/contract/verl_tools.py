"""verl tools for data exported by synth: the agent contract's tools as verl `BaseTool` subclasses.

Not imported by synth: `synth export --format verl` copies this file next to the Parquet as
`synth_verl_tools.py`, together with `synth_contract.py` (synth/contract/portable.py: the rendering
and the reward) and `tool_config.yaml`, which names these classes and gives each its schema. The
tools call `synth search serve` over HTTP (POST /retrieve, POST /open) and render what it returns
with the same functions synth's own agents used, so RL rollouts see exactly the observations the
SFT data shows.

Needs verl and the standard library only. verl finds the module on the Python path: run verl from
the export folder with PYTHONPATH=$PWD. SYNTH_RETRIEVAL_URL overrides the server URL of the config.
"""

import asyncio
import os

import synth_contract
from verl.tools.base_tool import BaseTool
from verl.tools.schemas import ToolResponse


class _ServerTool(BaseTool):
    """A tool answered by `synth search serve`: the config's server, or the row's own world's (a row of
    a `synth mix` of several worlds names its server in its create_kwargs)."""

    def __init__(self, config: dict, tool_schema):
        super().__init__(config, tool_schema)
        self.url = (os.environ.get("SYNTH_RETRIEVAL_URL") or config["retrieval_service_url"]).rstrip("/")
        self.timeout = float(config.get("timeout", 30))
        self.row_urls: dict[str, str] = {}

    async def create(self, instance_id=None, **kwargs):
        """verl hands the row's create_kwargs here (0.9: as `create_kwargs=`; older releases: as keywords)."""
        found, response = await super().create(instance_id, **kwargs)
        row = kwargs["create_kwargs"] if isinstance(kwargs.get("create_kwargs"), dict) else kwargs
        if row.get("retrieval_service_url"):
            self.row_urls[found] = str(row["retrieval_service_url"]).rstrip("/")
        return found, response

    async def release(self, instance_id: str, **kwargs) -> None:
        self.row_urls.pop(instance_id, None)
        await super().release(instance_id, **kwargs)

    async def _call(self, instance_id: str, path: str, payload: dict) -> dict:
        url = self.row_urls.get(instance_id, self.url)
        return await asyncio.to_thread(synth_contract.post_json, url + path, payload, self.timeout)


class SearchTool(_ServerTool):
    """`search`: top-k passages per query, rendered in the contract's observation style."""

    def __init__(self, config: dict, tool_schema):
        super().__init__(config, tool_schema)
        self.topk = int(config.get("topk", 3))
        self.observation = config.get("observation", "synth")
        self.argument = next(iter(self.tool_schema.function.parameters.properties))

    async def execute(self, instance_id: str, parameters: dict, **kwargs):
        error = synth_contract.argument_error("search", parameters, self.argument)
        if error is not None:
            return ToolResponse(text=error), 0.0, {}
        queries = synth_contract.search_queries(parameters)
        try:
            body = await self._call(instance_id, "/retrieve", {"queries": queries, "topk": self.topk})
        except (OSError, ValueError) as failure:
            return ToolResponse(text=f"error: the search service failed ({failure})"), 0.0, {"error": str(failure)}
        results = [[synth_contract.as_document(hit) for hit in hits] for hits in body["result"]]
        return (
            ToolResponse(text=synth_contract.render_search(self.observation, results)),
            0.0,
            {"queries": len(queries)},
        )


class OpenTool(_ServerTool):
    """`open`: one whole document by id."""

    async def execute(self, instance_id: str, parameters: dict, **kwargs):
        error = synth_contract.argument_error("open", parameters)
        if error is not None:
            return ToolResponse(text=error), 0.0, {}
        doc_id = str(parameters["doc_id"])
        try:
            [found] = (await self._call(instance_id, "/open", {"ids": [doc_id]}))["result"]
        except (OSError, ValueError) as failure:
            return ToolResponse(text=f"error: the document service failed ({failure})"), 0.0, {"error": str(failure)}
        return (
            ToolResponse(
                text=synth_contract.render_document(synth_contract.as_document(found) if found else None, doc_id)
            ),
            0.0,
            {},
        )


class AnswerTool(BaseTool):
    """`answer` (contracts that finish with a call): acknowledges; the reward reads the call."""

    async def execute(self, instance_id: str, parameters: dict, **kwargs):
        answer = parameters.get("answer") if isinstance(parameters, dict) else None
        if not isinstance(answer, str) or not answer.strip():
            return ToolResponse(text="error: answer needs a non-empty string `answer`"), 0.0, {}
        return ToolResponse(text=synth_contract.ANSWER_RECORDED), 0.0, {}

"""A model-calling run for the kill-and-rerun test: asks a loopback server N questions through
LLMClient with the response cache, then prints the ledger summary as JSON.

Usage: python resumable_run.py SERVER_URL CACHE_PATH N
"""

import asyncio
import json
import sys
from pathlib import Path

from synth.llm.cache import ResponseCache
from synth.llm.client import LLMClient
from synth.llm.openai_http import OpenAICompatibleBackend
from synth.llm.reasoning import OFF
from synth.llm.types import ChatRequest


async def main(url: str, cache_path: Path, count: int) -> None:
    # declared without reasoning: no probe, so the test counts exactly these requests in the cache
    backend = OpenAICompatibleBackend("smol", [url], max_concurrency=4, reasoning=OFF)
    client = LLMClient(backend, cache=ResponseCache(cache_path))
    requests = [ChatRequest(messages=[{"role": "user", "content": f"question {index}"}]) for index in range(count)]
    try:
        # Submitted in slices, as a recipe does, so the run is mid-way for a while.
        for start in range(0, count, 20):
            await client.complete(requests[start : start + 20])
    finally:
        await client.aclose()
    print(json.dumps(client.ledger.summary()))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])))

"""Rows of the `searchr1-sft` export (or Search-R1, R1-Searcher and ReAct rollouts saved as chat): a
user prompt and one assistant completion with its searches written as text.

The completion is cut at each call + observation pair of its dialect (`synth.store.dialects`:
`<search>`/`<information>`, `<|begin_of_query|>`/`<|begin_of_documents|>`, `Action:`/`Observation:`)
into OpenAI turns: the text before it is the assistant content, the call a tool call (`call_N`), the
observation its tool message; the text after the last one (thoughts and the answer) is the final
assistant message. The question is read out of the prompt (synth's
Search-R1 prompt, else the text after its last "Question:", else the whole prompt); the prompt
itself stays the user message, as the model saw it.
"""

from typing import Any

from synth.contract.contracts import SEARCHR1
from synth.schemas import ChatMessage
from synth.store.dialects import split
from synth.store.export.prompts import SEARCH_R1_PROMPT
from synth.store.imports.base import Parsed, Rollout, RowError, require
from synth.store.imports.messages import decoded


def question_in(prompt: str, template: str = SEARCH_R1_PROMPT) -> str:
    prefix, _, suffix = template.partition("{question}")
    if prompt.startswith(prefix) and prompt.endswith(suffix) and len(prompt) > len(prefix) + len(suffix):
        return prompt[len(prefix) : len(prompt) - len(suffix)]
    _, marker, after = prompt.rpartition("Question:")
    return after.strip() if marker and after.strip() else prompt


def parse(row: dict[str, Any]) -> Parsed:
    raw = decoded(require(row, "messages"), "messages")
    if not isinstance(raw, list):
        raise RowError("`messages` must be a list of messages")
    text = {entry.get("role"): entry.get("content") for entry in reversed(raw) if isinstance(entry, dict)}
    prompt, completion = text.get("user"), text.get("assistant")
    if not isinstance(prompt, str) or not prompt.strip() or not isinstance(completion, str) or not completion:
        raise RowError("a Search-R1 row needs a user message (the prompt) and an assistant message (the completion)")
    found = split(completion)
    dialect, turns = found if found is not None else (None, [ChatMessage(role="assistant", content=completion)])
    tools = list(dialect.tools) if dialect is not None else [SEARCHR1.tool("search")]
    system = next(
        (entry.get("content") for entry in raw if isinstance(entry, dict) and entry.get("role") == "system"), None
    )
    messages = [ChatMessage(role="system", content=system)] if isinstance(system, str) and system else []
    messages += [ChatMessage(role="user", content=prompt), *turns]
    return Parsed(question_in(prompt), [Rollout(messages, tools, id=row.get("trajectory_id"))])

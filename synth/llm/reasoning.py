"""Requests a reasoning model can answer: room to think, no stop string inside the thinking, and
earlier turns' reasoning sent back the way the model's family reads it.

A model declared with `reasoning: on` (or found to reason by `auto`, see `LLMClient.reasons`)
gets every request rewritten here, whoever built it: `reasoning_tokens` are added to the
request's token cap (callers size caps for the answer alone), and stop strings are dropped,
because servers match them against the whole generated text, reasoning included, so `"\\n"` or
`</answer>` would end the reply inside `<think>`. Callers read the answer from the final content
(`synth.llm.responses` separates it), which is the same text a stop would have left, plus
whatever followed it.

The agent keeps each assistant turn's reasoning under `reasoning_content` in the messages it
sends; `history` decides what the server receives: that field (vLLM, SGLang and DeepSeek read it,
and the model's chat template renders it as the family does, e.g. Qwen3 keeps the reasoning of
the turns after the last question), `reasoning` (vLLM's newer name, which its offline engine
reads), `think_tags` (written into the content, for templates that read only content), or
`drop`.
"""

from dataclasses import dataclass
from typing import Any, Literal

from synth.llm.types import ChatRequest

ReasoningMode = Literal["auto", "on", "off"]
ReasoningHistory = Literal["reasoning_content", "reasoning", "think_tags", "drop"]
REASONING_KEY = "reasoning_content"
"""Where callers put an assistant turn's reasoning in request messages."""


@dataclass(frozen=True)
class ReasoningPolicy:
    mode: ReasoningMode = "auto"
    tokens: int = 4096
    """Tokens for thinking, added to every request's cap when the model reasons."""
    history: ReasoningHistory = "reasoning_content"

    def prepare(self, request: ChatRequest, reasons: bool) -> ChatRequest:
        """`request` as sent to this model: room to reason and no stops when it reasons; earlier
        reasoning in its history sent back as `history` says (never to a model that does not reason)."""
        messages = [self._history_message(message, reasons) for message in request.messages]
        update: dict[str, Any] = {}
        if messages != request.messages:
            update["messages"] = messages
        if reasons:
            sampling = request.sampling
            update["sampling"] = sampling.model_copy(
                update={"max_tokens": sampling.max_tokens + self.tokens, "stop": []}
            )
        return request.model_copy(update=update) if update else request

    def _history_message(self, message: dict[str, Any], reasons: bool) -> dict[str, Any]:
        if REASONING_KEY not in message:
            return message
        rest = {key: value for key, value in message.items() if key != REASONING_KEY}
        reasoning = message[REASONING_KEY]
        if not reasons or not reasoning or self.history == "drop":
            return rest
        if self.history == "reasoning":
            return {**rest, "reasoning": reasoning}
        if self.history == "think_tags":
            return {**rest, "content": f"<think>\n{reasoning}\n</think>\n\n{rest.get('content') or ''}"}
        return message


OFF = ReasoningPolicy(mode="off")

PROBE_PROMPT = "What is 17 + 25? Reply with only the number, inside <answer></answer>."
"""What `auto` asks a model once per run (cached, so a rerun asks nothing): a reply with reasoning
in any dialect means the model reasons."""

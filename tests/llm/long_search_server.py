"""A loopback server that plays an agent on a search of `turns` turns: it searches one clue per turn,
and the answer is in the result of an early one. Its last turn answers from what it still sees:
the fact itself, a summary that kept it, or its own note of the document that held it (then it
reopens that document first). Asked to summarize (synth.search.context_policy's request), it keeps
every fact and note it is shown. Prompt tokens are counted as words, as the competent server does.
"""

import json
import re

from fault_server import FaultServer

FACT = re.compile(r"The vault code is ([A-Z]+-\d+)\.")
NOTE = re.compile(r"The vault code is in document (\S+?)\.")


class LongSearchServer(FaultServer):
    def __init__(self, turns: int, **options):
        super().__init__(**options)
        self.turns = turns
        self.summaries = 0

    def answer(self, request: dict) -> dict:
        messages = request["messages"]
        shown = "\n".join(str(message.get("content") or "") for message in messages)
        if messages[0]["role"] == "system" and messages[0]["content"].startswith("You keep the notes"):
            self.summaries += 1
            kept = sorted(set(FACT.findall(shown)))
            notes = sorted(set(NOTE.findall(shown)))
            text = " ".join(
                [f"The vault code is {code}." for code in kept]
                + [f"The vault code is in document {doc}." for doc in notes]
            )
            return _reply(request, {"role": "assistant", "content": text or "Nothing found yet."})
        turn = (request.get("seed") or 0) % 1000
        fact = FACT.search(shown)
        if turn >= self.turns - 2:  # the end: answer from what is still in view
            if fact:
                return _reply(request, {"role": "assistant", "content": f"<answer>{fact.group(1)}</answer>"})
            note = NOTE.search(shown)
            if note:
                return _reply(request, _call(f"call_{turn}", "open", {"doc_id": note.group(1)}, "Reopening my note."))
            return _reply(request, {"role": "assistant", "content": "<answer>unknown</answer>"})
        last = messages[-1]
        said = f"Checking record r{turn}."
        if last["role"] == "tool" and fact and fact.group(0) in str(last.get("content")):
            doc = re.search(r"\[id: (\S+?)\]", str(last["content"]))
            said = f"The vault code is in document {doc.group(1)}." if doc else said
        return _reply(request, _call(f"call_{turn}", "search", {"query": f"record r{turn}"}, said))


def _call(call_id: str, name: str, arguments: dict, content: str) -> dict:
    function = {"name": name, "arguments": json.dumps(arguments)}
    calls = [{"id": call_id, "type": "function", "function": function}]
    return {"role": "assistant", "content": content, "tool_calls": calls}


def _reply(request: dict, message: dict) -> dict:
    prompt = sum(len(str(m.get("content") or "").split()) for m in request["messages"])
    completion = len(str(message.get("content") or "").split()) + 5
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return {
        "id": "chatcmpl-long",
        "object": "chat.completion",
        "model": request.get("model"),
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }

"""A loopback OpenAI-compatible server that plays a competent search agent, answering in the response
dialect of a real server.

The model it plays knows each question's answer and hop count (`learn`) and is right with
probability `p[hops]` per attempt, drawn from a hash of the question and the request's seed, so a
run is reproducible and the test knows the expected pass rate. As a search agent it searches once
per hop and then answers (one attempt per rollout: the agent seeds turns as rollout seed x 1000 +
turn); closed-book it is right with `p_closed`, from gold evidence with `p_gold`; as an answer
judge it says whether the candidate names an accepted answer; as a self-play proposer it searches
as often as asked and proposes a question it then knows the answer to; as an audit reader it names,
blind, the answer it knows and the other answers it was told of (`others`), then, revealed, says
the stored answer is right when it is the one it knows and the only one when it knows no other.

Every reply is first written as one raw text, as a model writes it (`<think>` reasoning of
`reasoning_words` words, then the reply), then cut by the request's stop strings and `max_tokens`
(a word counts as a token), which vLLM applies to the whole output, reasoning included, and only
then split into fields as each dialect's parsers do:

    vllm         reasoning in `reasoning` (vLLM >= 0.10, --reasoning-parser qwen3), tool calls from the
                 hermes parser with random ids and "\\n\\n" left in the content, reasoning tokens in usage
    vllm_legacy  the same, reasoning in `reasoning_content` (older vLLM, --reasoning-parser deepseek_r1)
    no_parser    the raw text as content: <think>...</think> then <tool_call> blocks (no parsers)
    open_think   the same with the <think> opened by the chat template (DeepSeek-R1 distills)
    gpt_oss      vLLM serving GPT-OSS: reasoning_content, content null beside calls
    harmony      GPT-OSS harmony text passed through in the content
    sglang       reasoning_content, tool calls with ids and an index, content ""
    openai       a hosted API: no visible reasoning (counted in usage only), random ids
    repeat_ids   no reasoning; a tool parser that numbers ids from call_0 in every reply
"""

import hashlib
import json
import re
from collections import Counter

from fault_server import FaultServer

DIALECTS = ("vllm", "vllm_legacy", "no_parser", "open_think", "gpt_oss", "harmony", "sglang", "openai", "repeat_ids")
REASONING_DIALECTS = ("vllm", "vllm_legacy", "no_parser", "open_think", "gpt_oss", "harmony", "sglang")
"""Dialects that show the reasoning (openai counts it in usage only; repeat_ids plays a model without)."""
PROBE = "What is 17 + 25?"


def _draw(*parts) -> float:
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return int(digest[:12], 16) / 16**12


def _words(text: str) -> int:
    return len(text.split())


class CompetentServer(FaultServer):
    def __init__(
        self,
        dialect: str,
        p: dict[int, float] | None = None,
        p_closed: float = 0.0,
        p_gold: float = 1.0,
        reasoning_words: int = 60,
        **options,
    ):
        super().__init__(**options)
        if dialect not in DIALECTS:
            raise ValueError(f"unknown dialect {dialect!r}")
        self.dialect = dialect
        self.p = p or {}
        self.p_closed, self.p_gold = p_closed, p_gold
        self.reasoning_words = reasoning_words
        self.known: dict[str, tuple[str, int]] = {}
        self.leads: dict[str, list[str]] = {}
        """Question -> its search queries, step by step (else the question with the step's number)."""
        """Question -> (answer, hops): what the model knows."""
        self.others: dict[str, list[str]] = {}
        """Question -> other real-world answers it knows (an audit reader names them)."""
        self.replies = Counter()
        """Replies by kind: 'reasoning' counts those that showed reasoning."""

    @property
    def shows_reasoning(self) -> bool:
        return self.dialect in REASONING_DIALECTS

    def learn(self, items, leads=None) -> None:
        """What the model knows of each item: its answer and hops, and (`leads(item)`: a query per hop)
        what it searches at each step, as a model that follows the chain searches each hop's entity."""
        for item in items:
            question = " ".join(item.question.split())
            self.known[question] = (item.answer, item.hops)
            if leads is not None:
                self.leads[question] = list(leads(item))

    # ---- what the model writes ------------------------------------------------------------------

    def answer(self, request: dict) -> dict:
        choices, completion_tokens, reasoning_tokens = [], 0, 0
        for index in range(request.get("n", 1)):
            thought, action = self._decide(request, index)
            mode = "native" if request.get("tools") else "json" if "response_format" in request else "text"
            raw, thought_part = self._raw(thought, action, mode)
            raw, finish = _cut(raw, request.get("stop") or [], request.get("max_tokens") or 10**9)
            message, finish, shown = self._split(raw, finish, request, index)
            choices.append({"index": index, "message": message, "finish_reason": finish})
            hidden = _words(thought) if self.dialect == "openai" else 0  # an API's reasoning: counted, never shown
            completion_tokens += _words(raw) + hidden
            reasoning_tokens += min(_words(raw), _words(thought_part)) + hidden
            self.replies["all"] += 1
            self.replies["reasoning"] += shown
        prompt_tokens = sum(_words(str(m.get("content") or "")) for m in request["messages"])
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if self.dialect in ("vllm", "vllm_legacy", "openai"):
            usage["completion_tokens_details"] = {"reasoning_tokens": reasoning_tokens}
        return {
            "id": "chatcmpl-competent",
            "object": "chat.completion",
            "model": request.get("model"),
            "choices": choices,
            "usage": usage,
        }

    def _decide(self, request: dict, index: int) -> tuple[str, dict]:
        """(what it thinks, what it does): an action is {"say": text} or {"call": name, "arguments": {...}},
        with a second call under "also" when it searches twice at once (native protocol)."""
        messages = request["messages"]
        system = next((m.get("content") or "" for m in messages if m["role"] == "system"), "")
        schema = (request.get("response_format") or {}).get("json_schema", {}).get("schema", {})
        properties = schema.get("properties", {})
        thinking = _thinking(self.reasoning_words)
        if any(PROBE in (m.get("content") or "") for m in messages):
            return thinking, {"say": "<answer>42</answer>"}
        if "same" in properties:
            return thinking, {"say": json.dumps({"same": _same_answer(messages[-1]["content"])})}
        if "answers" in properties or "rating" in properties:
            return thinking, {"say": json.dumps(self._audit(messages[-1]["content"], "rating" in properties))}
        if "equivalent" in properties:
            return thinking, {"say": json.dumps({"equivalent": True, "problem": ""})}
        if set(properties) == {"question"}:  # the verbalizer: the question, as it was
            question = re.search(r"^Question: (.+)$", messages[-1]["content"], re.MULTILINE)
            return thinking, {"say": json.dumps({"question": question.group(1) if question else "Which one?"})}
        proposer = _proposer_task(messages)
        if proposer is not None:
            return thinking, self._propose(request, proposer)
        position, question = self._question(messages)
        if question is None:
            return thinking, {"say": "<answer>I do not know</answer>"}
        answer, hops = self.known[question]
        seed = request.get("seed") or 0
        agent = bool(request.get("tools")) or "anyOf" in schema or "<tool_call>" in system
        if not agent:
            gold = messages[position]["content"].startswith("Documents:")
            chance = self.p_gold if gold else self.p_closed
            right = _draw(question, seed, index, "gold" if gold else "closed") < chance
            return thinking, {"say": f"<answer>{answer if right else _wrong(question, seed, index)}</answer>"}
        done = sum(
            m["role"] == "tool" or (m.get("content") or "").startswith("<tool_response>")
            for m in messages[position + 1 :]
        )
        if done < hops:
            search = {"call": "search", "arguments": {"query": self._query(question, done)}}
            if request.get("tools") and done == 0 and hops >= 3:  # two searches at once, as capable models do
                search["also"] = {"call": "search", "arguments": {"query": self._query(question, 1)}}
            return thinking, search
        rollout = seed // 1000
        right = _draw(question, rollout, "search") < self.p.get(hops, 0.0)
        final = answer if right else _wrong(question, rollout, 0)
        if _offers(request, "answer"):
            return thinking, {"call": "answer", "arguments": {"answer": final}}
        return thinking, {"say": f"<answer>{final}</answer>"}

    def _audit(self, prompt: str, revealed: bool) -> dict:
        """An audit reader's reply: blind, the answers it knows; revealed, its verdict on the stored one."""
        question = " ".join(re.search(r"^Question: (.+)$", prompt, re.MULTILINE).group(1).split())  # type: ignore[union-attr]
        known = self.known.get(question)
        others = self.others.get(question, [])
        if not revealed:
            return {"answers": ([known[0]] if known else []) + others}
        stored = re.search(r"^Stored answer: (.+?)(?: \(also called .*\))?$", prompt, re.MULTILINE)
        right = known is not None and stored is not None and stored.group(1).strip() == known[0]
        rating = "good" if right and not others else "bad"
        note = f"also {'; '.join(others)}" if others else "" if right else "the stored answer is not the one I know"
        return {"right": right, "only": not others, "rating": rating, "other_answers": others, "note": note}

    def _query(self, question: str, step: int) -> str:
        leads = self.leads.get(question, [])
        return leads[step] if step < len(leads) else f"{question} (step {step + 1})"

    def _question(self, messages: list[dict]) -> tuple[int, str | None]:
        """(index of the user message, question) of the last user message asking a known question."""
        for position in range(len(messages) - 1, -1, -1):
            message = messages[position]
            if message["role"] != "user":
                continue
            for line in reversed((message.get("content") or "").splitlines()):
                if line.startswith("Question: "):
                    question = " ".join(line.removeprefix("Question: ").split())
                    if question in self.known:
                        return position, question
        return -1, None

    def _propose(self, request: dict, task: tuple[int, str, int]) -> dict:
        position, target, searches = task
        turn = sum(m["role"] == "assistant" for m in request["messages"][position + 1 :])
        if turn < searches:
            return {"call": "search", "arguments": {"query": f"facts near the target, search {turn + 1}"}}
        question = f"Which entity does clue set {_draw(target, searches) * 1e6:.0f} describe?"
        self.known[question] = (target, searches)
        if _offers(request, "propose"):
            return {"call": "propose", "arguments": {"question": question}}
        return {"say": f"<question>{question}</question>"}

    # ---- how it comes out -----------------------------------------------------------------------

    def _raw(self, thought: str, action: dict, mode: str) -> tuple[str, str]:
        """(the raw text the model writes, its reasoning part). Under a JSON schema (`mode` json: the
        json protocol, structured output) a call is the bare JSON object; with tools offered
        (native) a harmony model addresses the call to the tool."""
        json_mode = mode == "json"
        call = json.dumps({"name": action["call"], "arguments": action["arguments"]}) if "call" in action else None
        calls = [action, action["also"]] if "also" in action else [action]
        if self.dialect == "harmony":
            analysis = f"<|channel|>analysis<|message|>{thought}<|end|>"
            if call and mode == "native":
                reply = "".join(
                    f"<|start|>assistant<|channel|>commentary to=functions.{one['call']} <|constrain|>json"
                    f"<|message|>{json.dumps(one['arguments'])}<|call|>"
                    for one in calls
                )
            else:
                written = (call if json_mode else f"<tool_call>\n{call}\n</tool_call>") if call else action["say"]
                reply = f"<|start|>assistant<|channel|>final<|message|>{written}<|return|>"
            return analysis + reply, analysis
        if call:
            blocks = [json.dumps({"name": one["call"], "arguments": one["arguments"]}) for one in calls]
            visible = call if json_mode else "\n".join(f"<tool_call>\n{block}\n</tool_call>" for block in blocks)
        else:
            visible = action["say"]
        if self.dialect in ("openai", "repeat_ids"):
            return visible, ""
        think = f"<think>\n{thought}\n</think>\n\n"
        return think + visible, think

    def _split(self, raw: str, finish: str, request: dict, index: int) -> tuple[dict, str, bool]:
        """(message, finish reason, whether reasoning was shown) as the dialect's parsers make them."""
        dialect = self.dialect
        if dialect in ("no_parser", "harmony"):
            return {"role": "assistant", "content": raw}, finish, dialect == "harmony" or "<think>" in raw
        if dialect == "open_think":
            return {"role": "assistant", "content": raw.removeprefix("<think>\n")}, finish, True
        reasoning, content = None, raw
        if dialect != "openai" and raw.startswith("<think>"):
            inside, closed, after = raw.removeprefix("<think>").partition("</think>")
            reasoning = inside.strip("\n")
            content = after if closed else ""
        calls = []
        if request.get("tools"):  # the tool parser runs when the request offers tools
            for number, block in enumerate(re.findall(r"<tool_call>\s*(.*?)\s*</tool_call>", content, re.DOTALL)):
                try:
                    payload = json.loads(block)
                except json.JSONDecodeError:
                    continue
                call = {
                    "id": self._call_id(request, index, number),
                    "type": "function",
                    "function": {"name": payload["name"], "arguments": json.dumps(payload["arguments"])},
                }
                if dialect == "sglang":
                    call["index"] = number
                calls.append(call)
            if calls:
                content = re.sub(r"<tool_call>.*?</tool_call>", "", content, flags=re.DOTALL)
                finish = "tool_calls" if finish == "stop" else finish
        message: dict = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
            message["content"] = {"gpt_oss": None, "sglang": "", "openai": None}.get(dialect, content or None)
        elif dialect == "sglang" and not content:
            message["content"] = ""
        elif not content:
            message["content"] = None
        if reasoning is not None:
            field = "reasoning" if dialect == "vllm" else "reasoning_content"
            message[field] = reasoning
        return message, finish, reasoning is not None and bool(reasoning)

    def _call_id(self, request: dict, index: int, number: int) -> str:
        if self.dialect == "repeat_ids":
            return f"call_{number}"
        digest = hashlib.sha256(json.dumps(request["messages"]).encode() + f"{index}:{number}".encode()).hexdigest()
        return {"vllm": "chatcmpl-tool-", "vllm_legacy": "chatcmpl-tool-"}.get(self.dialect, "call_") + digest[:16]


def _cut(raw: str, stops: list[str], max_tokens: int) -> tuple[str, str]:
    """The text a server returns: cut at the first stop string anywhere in it (reasoning included;
    the stop itself is not returned), then at `max_tokens` words."""
    finish = "stop"
    hits = [raw.find(stop) for stop in stops if stop and stop in raw]
    if hits:
        raw = raw[: min(hits)]
    words = list(re.finditer(r"\S+", raw))
    if len(words) > max_tokens:
        raw, finish = raw[: words[max_tokens - 1].end()], "length"
    return raw, finish


def _thinking(words: int) -> str:
    """Reasoning of about `words` words over several lines, as models write it."""
    line = "I should check each clue against what the documents say before I commit."
    lines = [line] * max(1, words // _words(line))
    return "Let me work this out.\n" + "\n".join(lines)


def _wrong(question: str, seed, index) -> str:
    return f"Unknown Person {_draw(question, seed, index, 'wrong') * 1e4:.0f}"


def _offers(request: dict, name: str) -> bool:
    """Whether the request offers tool `name` (as a tool, or as a choice of its JSON schema)."""
    tools = [tool["function"]["name"] for tool in request.get("tools") or []]
    schema = json.dumps((request.get("response_format") or {}).get("json_schema", {}))
    return name in tools or f'"const": "{name}"' in schema


def _proposer_task(messages: list[dict]) -> tuple[int, str, int] | None:
    """(index, target, searches asked) of a self-play proposer's task, or None."""
    for position, message in enumerate(messages):
        content = message.get("content") or ""
        target = re.match(r"Target answer: (.+)$", content, re.MULTILINE)
        searches = re.search(r"Make (\d+) different searches", content)
        if message["role"] == "user" and target and searches and "Grey Harbour" not in content:
            return position, target.group(1).strip(), int(searches.group(1))
    return None


def _same_answer(prompt: str) -> bool:
    accepted = re.search(r"Accepted answers: (.+)$", prompt, re.MULTILINE)
    candidate = re.search(r"Candidate answer: (.+)$", prompt, re.MULTILINE)
    if not accepted or not candidate:
        return False
    names = {name.strip().lower() for name in accepted.group(1).split(";")}
    return candidate.group(1).strip().lower() in names

"""synth's agent contract at run time, in one standard-library file that travels with the data.

`synth export --format verl` writes this file next to the Parquet as `synth_contract.py`: verl loads
it as the reward (`reward.custom_reward_function.path=synth_contract.py` and `.name=compute_score`)
and the exported tools module renders search results with it. synth renders its own agents' tool
results and scores answers with the very same functions, so an observation or a score cannot differ
between the SFT data and the RL run. Nothing here imports synth: keep it that way.

- Observations (`render_search`, `render_document`) in three styles:
    synth     Doc 1(Title: T) [id: I] text        one line per document ("No results." when empty);
              an opened document: (Title: T) [id: I] text
    searchr1  Doc 1(Title: "T") text              Search-R1's `_passages2string` of /retrieve results
    verl      {"result": "Doc 1 (Title: \"T\")\ntext\n\nDoc 2 ..."}   verl's Search-R1-like search tool
              (one block per query, joined by "\n---\n")
- Answers: the last `<answer>...</answer>` or the last `answer` tool call (a Hermes/Qwen
  `<tool_call>{"name": "answer", "arguments": {"answer": ...}}</tool_call>` block), whichever comes
  later in the rollout; text inside `<tool_response>`/`<information>` blocks (the documents) is ignored.
- The retriever: `post_json` calls `synth search serve` (/retrieve, /open) and `as_document` keeps
  the fields the renderers read; the exported verl tools and TRL script both reach it this way.
- Context policies (`archived_indices`, `archive_stub`, `summary_cut`, `transcript`): what a long
  search shows of its own history, on plain chat messages; synth's agents (synth.search.context_policy)
  and the exported verl agent loop (synth_verl_agent_loop.py) shape each request with them.
- Matching (`normalize_answer`): SQuAD's normalization (lowercase, drop punctuation and the articles
  a/an/the, collapse whitespace), which Search-R1's and verl's exact-match scorers use, plus three
  documented differences: Unicode NFKC and accent folding ("Zoë Saldaña" = "Zoe Saldana"), casefold
  instead of lower ("Straße" = "strasse"), and typographic quotes and dashes count as punctuation.
"""

import json
import re
import string
import unicodedata
import urllib.request
from collections import Counter
from collections.abc import Iterable
from typing import Any, Literal

ANSWER_RECORDED = "Answer recorded."
"""What the `answer` tool says back, in synth's agents and in the exported verl tool alike."""
NO_RESULTS = "No results."

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = str.maketrans("", "", string.punctuation + "‘’“”–—")
ANSWER_TAG = re.compile(r"<answer>(.*?)</answer>", re.DOTALL)
_TOOL_CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)
_OBSERVATIONS = re.compile(r"<(tool_response|information)>.*?</\1>", re.DOTALL)


def normalize_answer(text: str) -> str:
    if not text.isascii():  # (ASCII text is its own NFKC and NFKD form, with no combining marks)
        text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text))
        text = "".join(character for character in text if not unicodedata.combining(character))
    text = text.casefold().translate(_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str, reference: str) -> float:
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(reference).split()
    common = sum((Counter(predicted) & Counter(expected)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def match_answer(
    prediction: str | None, answers: Iterable[str], f1_threshold: float | None = None
) -> tuple[Literal["exact", "alias", "f1", "none"], float]:
    """How `prediction` matches the accepted answers (first = canonical, rest = aliases): "exact",
    "alias", "f1" (best token F1 >= `f1_threshold`, when given) or "none"; and its best F1."""
    answers = list(answers)
    if prediction is None or not answers:
        return "none", 0.0
    normalized = normalize_answer(prediction)
    best_f1 = max(token_f1(prediction, answer) for answer in answers)
    if normalized and normalized == normalize_answer(answers[0]):
        return "exact", 1.0
    if normalized and any(normalized == normalize_answer(alias) for alias in answers[1:]):
        return "alias", 1.0
    if f1_threshold is not None and best_f1 >= f1_threshold:
        return "f1", best_f1
    return "none", best_f1


def extract_answer(solution_str: str) -> str | None:
    """The final answer of a rollout: the last answer tag or `answer` call, stripped; None if neither."""
    text = _OBSERVATIONS.sub(" ", solution_str)
    found: list[tuple[int, str]] = [(match.start(), match.group(1)) for match in ANSWER_TAG.finditer(text)]
    for match in _TOOL_CALL.finditer(text):
        answer = _answer_call_argument(match.group(1))
        if answer is not None:
            found.append((match.start(), answer))
    if not found:
        return None
    return max(found)[1].strip()


def extract_tagged(text: str | None, tag: str) -> str | None:
    """The content of the last <tag>...</tag> (any case), whitespace folded, or None."""
    found = re.findall(rf"<{tag}>(.*?)</{tag}>", text or "", re.DOTALL | re.IGNORECASE)
    if not found:
        return None
    return " ".join(found[-1].split()) or None


def _answer_call_argument(block: str) -> str | None:
    try:
        call = json.loads(block.strip())
    except json.JSONDecodeError:
        return None
    if not isinstance(call, dict) or call.get("name") != "answer":
        return None
    arguments = call.get("arguments")
    if isinstance(arguments, str):  # arguments written as a JSON string
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    answer = arguments.get("answer") if isinstance(arguments, dict) else None
    return answer if isinstance(answer, str) else None


def ground_truth_answers(ground_truth: Any) -> list[str]:
    """Accept {"target": [...]} (Search-R1 / synth), a list (numpy arrays included) or a string."""
    if isinstance(ground_truth, dict):
        ground_truth = ground_truth.get("target", ground_truth.get("answers", []))
    if isinstance(ground_truth, str):
        return [ground_truth]
    return [str(answer) for answer in ground_truth]


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict | None = None,
    format_score: float = 0.0,
    **kwargs: Any,
) -> float:
    """verl's custom reward signature; any `data_source`. 1.0 when the final answer (tag or call)
    matches the ground truth or an alias after normalization; `format_score` for a wrong answer
    in a well-formed tag or call; 0.0 without one."""
    answer = extract_answer(solution_str)
    if answer is None:
        return 0.0
    kind, _ = match_answer(answer, ground_truth_answers(ground_truth))
    return 1.0 if kind != "none" else format_score


# Observations. A document is a dict with "id", "title" and "text".


def render_search(style: str, results: list[list[dict]]) -> str:
    """What one search call shows the agent: `results` holds one list of documents per query."""
    if style == "synth":
        documents = [document for hits in results for document in hits]
        lines = [
            f"Doc {number}(Title: {d['title']}) [id: {d['id']}] {d['text']}"
            for number, d in enumerate(documents, start=1)
        ]
        return "\n".join(lines) if lines else NO_RESULTS
    if style == "searchr1":
        return "\n".join(
            "\n".join(f'Doc {number}(Title: "{d["title"]}") {d["text"]}' for number, d in enumerate(hits, start=1))
            for hits in results
        ).strip()
    if style == "verl":
        blocks = [
            "\n\n".join(
                f'Doc {number} (Title: "{d["title"]}")\n{d["text"]}' for number, d in enumerate(hits, start=1)
            ).strip()
            for hits in results
        ]
        return json.dumps({"result": "\n---\n".join(blocks)}, ensure_ascii=False)
    raise ValueError(f"unknown observation style {style!r}")


def post_json(url: str, payload: dict, timeout: float) -> dict:
    """POST `payload` as JSON to `synth search serve` and return its JSON answer."""
    request = urllib.request.Request(
        url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def as_document(payload: dict) -> dict:
    """A /retrieve hit or /open result as the document the renderers take."""
    return {"id": payload["id"], "title": payload["title"], "text": payload["text"]}


def render_document(document: dict | None, doc_id: str) -> str:
    """What `open` shows: the whole document, or an error the agent can read."""
    if document is None:
        return f"error: no document with id {doc_id!r}"
    return f"(Title: {document['title']}) [id: {document['id']}] {document['text']}"


def argument_error(name: str, arguments: Any, search_argument: str = "query") -> str | None:
    """Why a call of a world tool cannot run as written (the observation the agent gets), or None."""
    if not isinstance(arguments, dict):
        return f"error: the arguments of {name} must be a JSON object"
    if name == "search":
        if search_argument == "query_list":
            queries = arguments.get("query_list")
            if (
                not isinstance(queries, list)
                or not queries
                or not all(isinstance(q, str) and q.strip() for q in queries)
            ):
                return "error: search needs `query_list`, a non-empty list of non-empty strings"
        else:
            query = arguments.get("query")
            if not isinstance(query, str) or not query.strip():
                return "error: search needs a non-empty string `query`"
    elif name == "open":
        if arguments.get("doc_id") is None:
            return "error: open needs a `doc_id` from a search result"
    return None


def search_queries(arguments: dict) -> list[str]:
    """The queries of a well-formed search call (`query` or `query_list`)."""
    if "query_list" in arguments:
        return [str(query) for query in arguments["query_list"]]
    return [arguments["query"]]


# Reading a synth-style search result back (the only style that shows document ids).

_SYNTH_DOC = re.compile(r"^Doc (\d+)\(Title: (.*?)\) \[id: (.*?)\] ", re.MULTILINE)


def numbered(pattern: re.Pattern, text: str, separator: str) -> list[tuple[re.Match, str]] | None:
    """Matches of `pattern` numbered 1, 2, ... that cover `text`, each with the text up to the next one."""
    if pattern.match(text) is None:  # (cheap: most texts that are not results fail at their start)
        return None
    matches = [match for match in pattern.finditer(text)]
    documents, expected = [], 1
    for index, match in enumerate(matches):
        if int(match.group(1)) != expected:
            return None
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end() : end]
        if index + 1 < len(matches):
            if not body.endswith(separator):
                return None
            body = body[: len(body) - len(separator)]
        documents.append((match, body))
        expected += 1
    return documents


def parse_synth(text: str) -> list[list[dict]] | None:
    """The documents of a synth-style search result (one query's list), or None for other text."""
    if text == NO_RESULTS:
        return [[]]
    documents = numbered(_SYNTH_DOC, text, "\n")
    if documents is None:
        return None
    return [[{"id": match.group(3), "title": match.group(2), "text": body} for match, body in documents]]


# Context policies. A message is a dict with "role", "content" and, for a call, "tool_calls"
# ([{"function": {"name": ..., "arguments": ...}}]).

PROMPT_MESSAGES = 2
"""A rollout starts with the system prompt and the question: always shown."""
SUMMARY_SYSTEM = (
    "You keep the notes of a research assistant. Summarize the work below so it can go on without it: the "
    "question, every fact found with the id of the document it came from, the candidate answers, and what is "
    "still to find. Write the summary only."
)
SUMMARY_LEAD = "Summary of your research so far (earlier turns are no longer shown):\n"


def archive_stub(content: str | None) -> str:
    """What an archived tool result shows: the documents it listed, to reopen with `open`."""
    found = parse_synth(content or "")
    ids = [document["id"] for query in found for document in query if document["id"]] if found else []
    if ids:
        return f"[archived result: documents {', '.join(ids)}; call open with an id to read one again]"
    return "[archived result; call the tool again to see it]"


def archived_indices(roles: list[str], keep: int) -> list[int]:
    """The positions of the tool results shown as stubs: every one but the latest `keep`."""
    results = [index for index, role in enumerate(roles) if role == "tool"]
    return results[: max(0, len(results) - keep)]


def archived_messages(messages: list[dict], keep: int) -> tuple[list[dict], list[int]]:
    """`messages` with every tool result but the latest `keep` replaced by its stub, and which."""
    old = archived_indices([message["role"] for message in messages], keep)
    stubbed = set(old)
    shown = [
        {**message, "content": archive_stub(message.get("content"))} if index in stubbed else message
        for index, message in enumerate(messages)
    ]
    return shown, old


def summarized_messages(messages: list[dict], summary: str, upto: int) -> list[dict]:
    """The prompt, the summary as a user turn, then the messages from `upto` on."""
    return [*messages[:PROMPT_MESSAGES], {"role": "user", "content": SUMMARY_LEAD + summary}, *messages[upto:]]


def summary_cut(roles: list[str], calls: list[bool], keep: int) -> int:
    """Where a summary ends (`calls`: whether each message makes tool calls): before the latest `keep`
    tool results' calls, never inside a call and its results; with `keep` 0, after everything (ReSum's
    scheme: the summary replaces the history)."""
    results = [index for index, role in enumerate(roles) if role == "tool"]
    if not keep:
        return len(roles)
    if len(results) <= keep:
        return 0
    cut = results[len(results) - keep]
    while cut > 0 and roles[cut - 1] == "tool":
        cut -= 1
    return cut - 1 if cut > 0 and calls[cut - 1] else cut


def summary_work(messages: list[dict], summaries: list[str], summarized: int, cut: int) -> list[dict]:
    """What the next summary folds in: the question, the previous summary (if any), then the work from
    the last cut (`summarized`, 0 before any) up to `cut`."""
    earlier = [{"role": "user", "content": SUMMARY_LEAD + summaries[-1]}] if summaries else []
    return [*messages[1:PROMPT_MESSAGES], *earlier, *messages[summarized or PROMPT_MESSAGES : cut]]


def summary_request(work: list[dict]) -> list[dict]:
    """The summarizing request's messages."""
    return [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": transcript(work)}]


def transcript(messages: list[dict]) -> str:
    """The work so far as plain text, for the summarizing request."""
    lines = []
    for message in messages:
        content = message.get("content") or ""
        if message["role"] == "assistant":
            calls = "; ".join(
                f"{call['function']['name']}({_arguments_text(call['function'].get('arguments'))})"
                for call in message.get("tool_calls") or []
            )
            lines.append(f"Assistant: {content}{' [calls: ' + calls + ']' if calls else ''}")
        elif message["role"] == "tool":
            lines.append(f"Result: {content}")
        else:
            lines.append(f"{message['role'].capitalize()}: {content}")
    return "\n".join(lines)


def _arguments_text(arguments: Any) -> str:
    """A call's arguments as the model wrote them (a JSON string; a parsed object is written back)."""
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)

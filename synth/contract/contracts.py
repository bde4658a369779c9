"""The agent contract: the tools an agent has, how their results read, and how it finishes.

Cold-start SFT and RL only work together when the model sees the same tools, the same observations
and the same way of finishing in both. So there is one declaration, read by every stage: the agents
that make data (teachers, panel solvers, self-play proposers), every SFT and RL export, the files
the verl export writes (tool config, tools module, reward) and `synth search serve`.

A contract is chosen by name. `synth` is the default everywhere; the others exist because a trainer
needs them, and a trajectory made under one contract is rendered faithfully under another at export
time, or refused with the reason (`synth.contract.render`).

Tool schemas use only what verl's `OpenAIFunctionToolSchema` keeps (property type, description,
enum): verl re-serializes the schemas of its tool config before rendering the prompt, so anything
else would make the RL prompt differ from the SFT rows.
"""

from dataclasses import dataclass
from typing import Literal, get_args

from synth.contract import portable
from synth.errors import ConfigError


def _function_tool(name: str, description: str, parameter: str, schema: dict) -> dict:
    """An OpenAI function-tool declaration with one required parameter."""
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": {parameter: schema}, "required": [parameter]},
        },
    }


SEARCH_TOOL = _function_tool(
    "search",
    "Search the document collection. Returns the top passages, each with its document id.",
    "query",
    {"type": "string", "description": "What to look for, in words."},
)
SEARCH_LIST_TOOL = _function_tool(
    "search",
    "Searches for relevant information based on the given queries.",
    "query_list",
    {
        "type": "array",
        "description": "A list of fully-formed semantic queries. The tool returns search results for each query.",
    },
)
OPEN_TOOL = _function_tool(
    "open",
    "Read one document in full by its id (as shown in search results).",
    "doc_id",
    {"type": "string", "description": "A document id from a search result."},
)
ANSWER_TOOL = _function_tool(
    "answer",
    "Give the final answer and stop. Only the answer itself (usually a name), no explanation.",
    "answer",
    {"type": "string", "description": "The final answer."},
)

Finish = Literal["tag", "call"]


@dataclass(frozen=True)
class AgentContract:
    name: str
    summary: str
    tools: tuple[dict, ...]
    """The world's tools (search, and open where the contract has it), as OpenAI function schemas."""
    observation: str
    """How tool results read: a style of `portable.render_search` ("synth", "searchr1", "verl")."""
    finish: Finish
    """"tag": the last assistant turn writes <answer>X</answer> and calls nothing (verl's tool loop
    stops at a turn without calls; Search-R1 reads the tag). "call": the agent calls `answer`, the
    tool says "Answer recorded.", and a closing turn repeats <answer>X</answer>, so no conversation
    ends on a tool turn and tag-reading scorers agree."""
    system_prompt: str
    question_prefix: str = "Question: "
    max_parallel_calls: int = 4
    """The most tool calls one assistant turn runs. An agent keeps a turn's first this many calls, as
    verl's tool loop does (`multi_turn.max_parallel_calls`, 1 unless set), and the verl command sets
    that key to this value: RL then runs every call the SFT rows teach, and SFT never teaches more."""

    @property
    def search_argument(self) -> str:
        return next(iter(self.tool("search")["function"]["parameters"]["properties"]))

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(tool["function"]["name"] for tool in self.tools)

    @property
    def schemas(self) -> list[dict]:
        """Every tool offered to the agent: the world's, plus `answer` when the contract finishes by a call."""
        return [*self.tools, *([ANSWER_TOOL] if self.finish == "call" else [])]

    def tool(self, name: str) -> dict:
        return next(tool for tool in self.tools if tool["function"]["name"] == name)

    def user_prompt(self, question: str) -> str:
        return f"{self.question_prefix}{question}"

    def answer_text(self, answer: str) -> str:
        return f"<answer>{answer}</answer>"

    def render_search(self, results: list[list[dict]]) -> str:
        return portable.render_search(self.observation, results)


_ANSWER_IN_TAGS = (
    "When you know the answer, reply with only the answer between <answer> and </answer>, "
    "for example <answer> Paris </answer>."
)

SYNTH = AgentContract(
    name="synth",
    summary="search(query) and open(doc_id); results with document ids; finish with <answer> tags (default)",
    tools=(SEARCH_TOOL, OPEN_TOOL),
    observation="synth",
    finish="tag",
    system_prompt=(
        "You answer questions by searching a collection of documents with the tools you are given. "
        "Call `search` as often as you need and `open` to read a document in full. " + _ANSWER_IN_TAGS
    ),
)
SYNTH_ANSWER_TOOL = AgentContract(
    name="synth-answer-tool",
    summary="the synth tools plus an answer(answer) tool: the answer is a call, then a closing <answer> turn",
    tools=(SEARCH_TOOL, OPEN_TOOL),
    observation="synth",
    finish="call",
    system_prompt=(
        "You answer questions by searching a collection of documents with the tools you are given. "
        "Call `search` as often as you need and `open` to read a document in full. When you know the answer, "
        "call `answer` with only the answer (usually a name); once it is recorded, repeat it between <answer> and "
        "</answer>."
    ),
)
SEARCHR1 = AgentContract(
    name="searchr1",
    summary='Search-R1: search(query) only, results as Search-R1 renders /retrieve (Doc i(Title: "T") text), '
    "<answer> tags",
    tools=(SEARCH_TOOL,),
    observation="searchr1",
    finish="tag",
    system_prompt="You answer questions by searching a collection of documents with the search tool. "
    + _ANSWER_IN_TAGS,
)
VERL_SEARCH = AgentContract(
    name="verl-search",
    summary='verl\'s Search-R1-like tool: search(query_list), results as its JSON {"result": ...}, <answer> tags',
    tools=(SEARCH_LIST_TOOL,),
    observation="verl",
    finish="tag",
    system_prompt="You answer questions by searching a collection of documents with the search tool. "
    + _ANSWER_IN_TAGS,
)

CONTRACTS: dict[str, AgentContract] = {
    contract.name: contract for contract in (SYNTH, SYNTH_ANSWER_TOOL, SEARCHR1, VERL_SEARCH)
}
DEFAULT = SYNTH
ContractName = Literal["synth", "synth-answer-tool", "searchr1", "verl-search"]
"""The names, as a type recipe configs validate against."""
assert list(get_args(ContractName)) == list(CONTRACTS), "ContractName must list every contract"


def get_contract(name: str) -> AgentContract:
    try:
        return CONTRACTS[name]
    except KeyError:
        raise ConfigError(f"unknown agent contract {name!r}; choose one of {', '.join(CONTRACTS)}") from None

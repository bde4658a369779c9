"""The path teacher: demonstrations with no model, following the item's recorded construction.

A multihop item records the graph path it was built from (`Item.path`: head, relation, tail per
hop, and the passage that states each edge). The path teacher walks it through the world's real
tools, as an agent would: per hop one search built from the known entity's name and the
relation's role ("Grown Ups producer"; a second wording from the relation's name if the first
misses), an `open` where a result shows the evidence passage without naming the next entity and
the contract has one, and a short template thought before every call. The answer comes the
contract's way. A demonstration is kept only when the tools really surfaced each hop's evidence
(the hop's passage among the results, with the next entity's name in what the agent was shown);
else it ends there, rejected as `evidence_not_surfaced`.

It is cheap cold-start SFT data, and a baseline to compare model teachers with. Its trajectories
say `procedural: true` and `teacher: path` in their metadata, and exports can leave them out
(`--where "model != 'path-teacher'"`) or take only them.
"""

import json
from dataclasses import dataclass, field

from synth.contract.contracts import ANSWER_TOOL
from synth.contract.portable import ANSWER_RECORDED
from synth.hashing import content_hash
from synth.kg.graph import KnowledgeGraph
from synth.kg.phrases import humanize
from synth.schemas import ChatMessage, FunctionCall, Hop, Item, ToolCall, Trajectory
from synth.schemas.trajectory import PATH_TEACHER
from synth.search.agent import ANSWERING
from synth.search.tools import SearchTools, ToolResult

NOT_SURFACED = "evidence_not_surfaced"
"""Finish (and reject) reason of a walk whose hop the tools did not show."""


@dataclass
class _Walk:
    """One demonstration as it is written."""

    messages: list[ChatMessage]
    calls: int = 0
    queries: list[str] = field(default_factory=list)

    def call(self, thought: str, name: str, arguments: dict) -> ToolCall:
        call = ToolCall(
            id=f"call_{self.calls}",
            function=FunctionCall(name=name, arguments=json.dumps(arguments, ensure_ascii=False)),
        )
        self.messages.append(ChatMessage(role="assistant", content=thought, tool_calls=[call]))
        self.calls += 1
        return call

    def observe(self, call: ToolCall, result: ToolResult) -> None:
        self.messages.append(
            ChatMessage(role="tool", tool_call_id=call.id, name=call.function.name, content=result.text)
        )


class PathTeacher:
    """Walks items' construction paths through `tools` (one demonstration per item, no model)."""

    model_id = PATH_TEACHER

    def __init__(self, kg: KnowledgeGraph, tools: SearchTools):
        self.kg, self.tools = kg, tools
        self.contract = tools.contract

    async def rollouts(self, items: list[Item]) -> list[Trajectory]:
        return [await self.demonstrate(item) for item in items]

    async def demonstrate(self, item: Item) -> Trajectory:
        walk = _Walk(
            [
                ChatMessage(role="system", content=ANSWERING.native_system(self.contract)),
                ChatMessage(role="user", content=f"{ANSWERING.prompt_prefix}{item.question}"),
            ]
        )
        finish, missed, answer = NOT_SURFACED, None, None
        for index, hop in enumerate(item.path):
            if not await self._hop(walk, hop, item.path[index - 1] if index else None):
                missed = index
                break
        else:
            if item.path:  # an item without a recorded path (self-play, imports) has nothing to follow
                finish, answer = "answered", item.answer
                self._finish(walk, self._found(item.path[-1]), answer)
        return Trajectory(
            id=content_hash({"item": item.id, "teacher": PATH_TEACHER, "contract": self.contract.name}),
            item_id=item.id,
            role="teacher",
            model=PATH_TEACHER,
            messages=walk.messages,
            tools=self.contract.schemas,
            final_answer=answer,
            num_tool_calls=walk.calls,
            finish_reason=finish,
            metadata={
                "procedural": True,
                "teacher": "path",
                "protocol": "native",
                "malformed_calls": 0,
                "queries": walk.queries,
                **({"missed_hop": missed} if missed is not None else {}),
                **self.tools.trajectory_metadata,
            },
        )

    async def _hop(self, walk: _Walk, hop: Hop, previous: Hop | None) -> bool:
        """Search for the hop's next entity; True once the tools showed its evidence."""
        known, _ = self._ends(hop)
        role = self._role(hop)
        name = self.kg.name(known)
        thought = (
            f"I start with {name} and look for its {role}."
            if previous is None
            else f"{self._found(previous)} Next I look for the {role} of {name}."
        )
        for query in dict.fromkeys([f"{name} {role}", f"{name} {humanize(hop.relation)}"]):
            value = [query] if self.contract.search_argument == "query_list" else query
            call = walk.call(thought, "search", {self.contract.search_argument: value})
            result = await self.tools.execute_async(call)
            walk.observe(call, result)
            walk.queries.append(query)
            if self._shows(hop, result):
                return True
            evidence = next((document for document in result.documents if self._is_evidence(hop, document.id)), None)
            if evidence is not None and "open" in self.contract.tool_names:
                call = walk.call(f"{evidence.title} may say more; I open it.", "open", {"doc_id": evidence.id})
                opened = await self.tools.execute_async(call)
                walk.observe(call, opened)
                if self._shows(hop, opened):
                    return True
            thought = f"That did not show the {role} of {name}; I search again with other words."
        return False

    def _finish(self, walk: _Walk, thought: str, answer: str) -> None:
        if self.contract.finish == "tag":
            walk.messages.append(
                ChatMessage(role="assistant", content=f"{thought}\n{self.contract.answer_text(answer)}")
            )
            return
        call = walk.call(thought, ANSWER_TOOL["function"]["name"], {"answer": answer})
        walk.calls -= 1  # delivering the answer is not a use of the world
        walk.messages.append(ChatMessage(role="tool", tool_call_id=call.id, name="answer", content=ANSWER_RECORDED))

    def _ends(self, hop: Hop) -> tuple[str, str]:
        """(the entity the hop starts from, the one it reaches), in the walk's direction."""
        return (hop.head, hop.tail) if hop.direction == "forward" else (hop.tail, hop.head)

    def _role(self, hop: Hop) -> str:
        """What the reached entity is to the known one ("producer", "place of birth")."""
        relation = self.kg.relations.get(hop.relation)
        role = (relation.tail_role if hop.direction == "forward" else relation.head_role) if relation else ""
        return role or humanize(hop.relation)

    def _found(self, hop: Hop) -> str:
        known, reached = self._ends(hop)
        return f"The {self._role(hop)} of {self.kg.name(known)} is {self.kg.name(reached)}."

    def _is_evidence(self, hop: Hop, doc_id: str) -> bool:
        return hop.evidence_doc_id is None or doc_id == hop.evidence_doc_id

    def _shows(self, hop: Hop, result: ToolResult) -> bool:
        """Whether a shown evidence passage names the entity the hop reaches."""
        _, reached = self._ends(hop)
        names = [name.casefold() for name in self.kg.names(reached)]
        return any(
            self._is_evidence(hop, document.id) and any(name in document.text.casefold() for name in names)
            for document in result.documents
        )

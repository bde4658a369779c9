"""A small store for the browse tests: one version with items (one holding a <script>), attempts,
verdicts and a trajectory with reasoning and a tool call."""

from synth.schemas import (
    ChatMessage,
    FilterVerdict,
    FunnelStage,
    Hop,
    Item,
    Provenance,
    SolverAttempt,
    Trajectory,
)
from synth.settings import Settings
from synth.store.publish import VersionSpec, publish_version

SCRIPT_QUESTION = "Which <script>alert('x')</script> film is it?"


def _item(index: int, hops: int, question: str | None = None) -> Item:
    path = [
        Hop(head=f"Person {index}", relation="directed", tail=f"Film {index}"),
        Hop(head=f"Film {index}", relation="released in", tail="1999"),
    ][: min(hops, 2)]
    return Item(
        id=f"item-{index}",
        question=question or f"Which film number {index} was made?",
        answer=f"Film {index}",
        recipe="multihop",
        hops=len(path),
        path=path,
        difficulty="medium" if index % 2 else "unsolved",
        provenance=Provenance(generator="test"),
    )


def make_store(settings: Settings) -> None:
    items = [_item(index, 1 + index % 2) for index in range(7)] + [_item(7, 2, SCRIPT_QUESTION)]
    attempts = [
        SolverAttempt(
            id=f"a-{item.id}",
            item_id=item.id,
            solver="served",
            model="served:test",
            condition="search",
            sample_index=0,
            answer=item.answer if index % 2 else "Wrong Film",
            correct=bool(index % 2),
            trajectory_id=f"t-{item.id}",
        )
        for index, item in enumerate(items)
    ]
    trajectory = Trajectory(
        id="t-item-1",
        item_id="item-1",
        role="solver",
        model="served:test",
        messages=[
            ChatMessage(role="user", content="Which film number 1 was made?"),
            ChatMessage(
                role="assistant",
                content=None,
                reasoning_content="I should search for the director first.",
                tool_calls=[
                    {
                        "id": "call-1",
                        "type": "function",
                        "function": {"name": "search", "arguments": '{"query": "film number 1"}'},
                    }
                ],
            ),
            ChatMessage(role="tool", tool_call_id="call-1", content="Doc 1(Title: Film 1) Film 1 was made in 1999."),
            ChatMessage(role="assistant", content="<answer>Film 1</answer>"),
        ],
        final_answer="Film 1",
        correct=True,
        num_tool_calls=1,
    )
    verdicts = [FilterVerdict(item_id=item.id, filter="leakage", kept=True) for item in items]
    spec = VersionSpec(
        name="films",
        recipe="multihop",
        config={"n": 8},
        models={"solver:served": "served:test"},
        kg_snapshot=None,
        seed=0,
        parent=None,
        funnel=[FunnelStage(stage="walk", input=20, kept=8, dropped={"ambiguous": 12})],
        summary={},
    )
    publish_version(
        settings, spec, {"items": items, "attempts": attempts, "trajectories": [trajectory], "verdicts": verdicts}
    )

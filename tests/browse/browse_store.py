"""A small store for the browse tests: films@1 with items (one holding a <script>, one built from
two constraints, a fact and numbered cues), attempts, verdicts and a trajectory with reasoning and a
tool call; films@2, derived from it (one item removed, one added, two relabeled); and two eval runs
of different models on the same items."""

from datetime import UTC, datetime

from synth.schemas import (
    ChatMessage,
    Constraint,
    Cue,
    EvalAttempt,
    EvalRun,
    Fact,
    FilterVerdict,
    FunnelStage,
    Hop,
    Item,
    Provenance,
    SolverAttempt,
    Step,
    Trajectory,
)
from synth.settings import Settings
from synth.store.evals import save_eval
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
        metadata={"style": "riddle" if index % 3 == 0 else "plain"},
    )


def _constructed(item: Item) -> Item:
    """The item as a construction: the path's lane (whose middle entity a fact narrows), a second
    lane from another anchor, and a cue for each lane and one for the fact."""
    return item.model_copy(
        update={
            "answer_entity_id": "1999",
            "constraints": [
                Constraint(
                    anchor="Person 1",
                    steps=[
                        Step(relation="directed", where=[Fact(anchor="Studio 1", relation="produced")]),
                        Step(relation="released in"),
                    ],
                ),
                Constraint(anchor="Festival 9", steps=[Step(relation="held in", direction="inverse")]),
            ],
            "cues": [
                Cue(text="the year a film by Person 1 came out", constraint=0, candidates=4),
                Cue(text="a film Studio 1 produced", constraint=0, step=0, candidates=7),
                Cue(text="the year Festival 9 was held", constraint=1, candidates=2),
            ],
            "evidence_doc_ids": ["Person 1#0"],
        }
    )


def make_store(settings: Settings) -> None:
    items = [_item(index, 1 + index % 2) for index in range(7)] + [_item(7, 2, SCRIPT_QUESTION)]
    items[1] = _constructed(items[1])
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
        step_labels=["exploration"],
        answer_seen_at=1,
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
        summary={
            "seconds": 12.5,
            "items_per_hops": {"1": 4, "2": 4},
            "realized_difficulty": {"2": {"items": 4, "answer_hit_step": 1.5, "calls_to_correct": 2.0}},
        },
    )
    publish_version(
        settings, spec, {"items": items, "attempts": attempts, "trajectories": [trajectory], "verdicts": verdicts}
    )
    _derive(settings, items)
    _evals(settings, items)


def _derive(settings: Settings, items: list[Item]) -> None:
    """films@2: item-0 gone, item-8 new, item-2 and item-3 relabeled."""
    relabeled = {"item-2": "hard", "item-3": "easy"}
    kept = [item.model_copy(update={"difficulty": relabeled.get(item.id, item.difficulty)}) for item in items[1:]]
    spec = VersionSpec(
        name="films",
        recipe="curate",
        config={"source": "films@1"},
        models={},
        kg_snapshot=None,
        seed=0,
        parent="films@1",
        funnel=[],
        summary={},
    )
    publish_version(settings, spec, {"items": [*kept, _item(8, 1)]})


def _evals(settings: Settings, items: list[Item]) -> None:
    """Two models on items 0-3: the first right on 1 and 3, the second on 1, 2 and 3."""
    for model, right in (("model-a", {"item-1", "item-3"}), ("model-b", {"item-1", "item-2", "item-3"})):
        eval_id = f"eval-{model}"
        attempts = [
            EvalAttempt(
                eval_id=eval_id,
                item_id=item.id,
                sample=0,
                question=item.question,
                gold=item.answer,
                predicted=item.answer if item.id in right else f"not {item.answer}",
                correct=item.id in right,
                match="exact" if item.id in right else "none",
                finish_reason="answered",
                tool_calls=1,
                messages=[
                    ChatMessage(role="user", content=item.question),
                    ChatMessage(role="assistant", content=f"<answer>{model} says so</answer>"),
                ],
            )
            for item in items[:4]
        ]
        run = EvalRun(
            id=eval_id,
            created_at=datetime(2026, 11, 1, 12, 0 if model == "model-a" else 30, tzinfo=UTC),
            model=model,
            model_id=model,
            source="films@1",
            split="all",
            k=1,
            items=4,
            pass_at_1=len(right) / 4,
            pass_at_k=len(right) / 4,
            ci95_low=0.1,
            ci95_high=0.9,
            summary={"by_hops": {"1": {"items": 2, "pass_at_1": 0.5, "pass_at_k": 0.5}}},
        )
        save_eval(settings, run, attempts)

"""`--context seen`: a trajectory written as the model saw it rather than as it happened.

A run under the `summarize` policy (synth.search.context_policy) saw its earlier work replaced by a
summary, so it is written as ReSum trains: one row per summary segment, each the prompt, the summary
the segment's turns saw (none for the first), and the segment's own turns up to its last assistant
turn (so every row but the last stops at a call: `CONTINUES` lets it). Every turn of a row saw
exactly what the row shows before it. A run under `archive` saw a
different window at every turn, so rows as seen would be one per turn: refused, with the reason.
Trajectories no policy shaped are written whole.
"""

from synth.contract.portable import PROMPT_MESSAGES, SUMMARY_LEAD
from synth.contract.render import CONTINUES
from synth.errors import ConfigError
from synth.schemas import ChatMessage, Trajectory
from synth.solving.trajectory_reading import labels_by_call


def as_seen(trajectory: Trajectory) -> list[Trajectory]:
    """The rows of `trajectory` as its model saw it (itself, when no policy shaped its context)."""
    context = trajectory.metadata.get("context")
    if not context or context.get("policy") == "none":
        return [trajectory]
    if context.get("policy") != "summarize":
        raise ConfigError(
            f"trajectory {trajectory.id} ran under the {context.get('policy')} context policy, whose view changes "
            "every turn: --context seen writes summarize runs only; export it with --context full"
        )
    messages, views, summaries = trajectory.messages, context["views"], context["summaries"]
    turns = [index for index, message in enumerate(messages) if message.role == "assistant"]
    segments: list[tuple[int | None, int, int]] = []  # (summary, shown from, last assistant turn)
    for view, turn in zip(views, turns, strict=False):
        summary = view.get("summary")
        if segments and segments[-1][0] == summary:
            segments[-1] = (summary, segments[-1][1], turn)
        else:
            segments.append((summary, view.get("summarized_before") or PROMPT_MESSAGES, turn))
    labels = labels_by_call(messages, trajectory.step_labels)
    rows = []
    for number, (summary, start, last) in enumerate(segments):
        own = [label for (message, _), label in sorted(labels.items()) if start <= message <= last]
        shown = list(messages[:PROMPT_MESSAGES])
        if summary is not None:
            shown.append(ChatMessage(role="user", content=SUMMARY_LEAD + summaries[summary]))
        shown += messages[start : last + 1]
        metadata = {**trajectory.metadata, CONTINUES: number < len(segments) - 1}
        rows.append(
            trajectory.model_copy(
                update={"id": f"{trajectory.id}#{number}", "messages": shown, "metadata": metadata, "step_labels": own}
            )
        )
    return rows

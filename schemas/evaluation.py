"""Records of `synth eval`: one row per attempt of the evaluated agent, one per eval run."""

from datetime import datetime

from pydantic import Field

from synth.schemas.base import JsonDict, NonBlank, Record
from synth.schemas.trajectory import ChatMessage


class EvalAttempt(Record):
    """One attempt of the evaluated model, as a search agent, on one held-out item."""

    eval_id: NonBlank
    item_id: NonBlank
    sample: int = Field(ge=0)
    """Which of the k attempts on the item."""
    question: NonBlank
    gold: NonBlank
    """The item's answer (aliases are in the dataset)."""
    predicted: str | None = None
    correct: bool
    match: str
    """How the prediction matched: exact, alias, f1, or none."""
    hops: int | None = None
    difficulty: str | None = None
    """The dataset's difficulty label of the item (None for a benchmark file)."""
    relation_family: str | None = None
    """The domain of the relation that reaches the answer (`people` for /people/person/place_of_birth)."""
    style: str | None = None
    tool_calls: int = 0
    answer_seen_at: int | None = None
    """The number of the call whose result first showed the answer (None: none did)."""
    turns: int = 0
    """Assistant turns."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str
    """answered, turn_budget_exhausted, token_budget_exhausted, truncated, or a model failure."""
    messages: list[ChatMessage] = Field(default_factory=list)


class EvalRun(Record):
    """One `synth eval`: what was evaluated on what, and its figures (`summary`)."""

    id: NonBlank
    created_at: datetime
    model: NonBlank
    """The declared model name, or the checkpoint folder given."""
    model_id: NonBlank
    """What the backend reports serving."""
    source: NonBlank
    """NAME@VERSION of a dataset, or the benchmark file's name."""
    split: str
    """The held-out split evaluated (`all` for a benchmark file)."""
    k: int = Field(ge=1)
    items: int = Field(ge=0)
    pass_at_1: float
    pass_at_k: float
    ci95_low: float
    ci95_high: float
    """Wilson 95% interval of pass@1 over items."""
    config: JsonDict = Field(default_factory=dict)
    """Retriever, top-k, contract, agent budget, protocol, split fractions."""
    summary: JsonDict = Field(default_factory=dict)
    """The breakdowns `synth evals show` prints (by hops, label, relation family, style) and totals."""

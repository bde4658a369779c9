"""Every key of a recipe's config is read by its run: a key nobody reads is a setting that silently
does nothing (self-play once accepted `panel.retrieval_k` and searched with another k).

The recipe runs its stages on a scripted backend, its config wrapped so each attribute read is
recorded (a model's own methods read through the wrapper too). Some keys are read only when the
data calls for them (a contamination threshold when a question overlaps a benchmark one) or in a
mode another key picks (`walk.search_budget` under `walk.policy=longest`), so each recipe runs a
few configurations that between them switch every part on; the test fails naming the keys none
of them read.
"""

import inspect
import json
import sys
import types
from pathlib import Path

import pytest
from pydantic import BaseModel

from synth.config import apply_params
from synth.errors import NothingSurvived
from synth.llm.fake import ScriptedBackend, dry_run_reply
from synth.run.plan import CONSTRUCT_STAGE, PLAN
from synth.run.publishing import publish
from synth.run.runner import Run, RunRequest, open_run
from synth.settings import Settings
from synth.store.catalog import Catalog
from synth.store.reader import iter_records

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_selfplay import CORPUS, ScriptedWorld, params  # noqa: E402

WHOLE = ("model_copy", "model_dump", "model_dump_json")
"""Reading these reads every key below the model."""


class Tracked:
    """A read-recording view of a config model: attribute reads go to the model; field reads are
    noted as dotted paths (list elements as `*`)."""

    def __init__(self, model: BaseModel, path: tuple, seen: set):
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_seen", seen)

    def __getattr__(self, name):
        model, path, seen = self._model, self._path, self._seen
        if name in type(model).model_fields:
            seen.add((*path, name))
            return _wrap(getattr(model, name), (*path, name), seen)
        if name in WHOLE:
            seen.update(leaves(model, path))
            return getattr(model, name)
        attribute = inspect.getattr_static(type(model), name, None)
        if inspect.isfunction(attribute):  # the model's own method: its reads of `self` are recorded too
            return types.MethodType(attribute, self)
        if isinstance(attribute, property):
            return attribute.fget(self)
        return getattr(model, name)

    def __eq__(self, other):
        return self._model == (other._model if isinstance(other, Tracked) else other)

    def __hash__(self):
        return hash(self._model)


def _wrap(value, path: tuple, seen: set):
    if isinstance(value, BaseModel):
        return Tracked(value, path, seen)
    if isinstance(value, list) and value and all(isinstance(element, BaseModel) for element in value):
        return [Tracked(element, (*path, "*"), seen) for element in value]
    return value


def leaves(model: BaseModel, path: tuple = ()) -> set[tuple]:
    """Every key of the config as a path: the fields of nested models, of list elements under `*`."""
    found = set()
    for name in type(model).model_fields:
        if name == "kind":  # which check an entry is (its class), not a setting of it
            continue
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            found |= leaves(value, (*path, name))
        elif isinstance(value, list) and value and all(isinstance(element, BaseModel) for element in value):
            for element in value:
                found |= leaves(element, (*path, name, "*"))
        else:
            found.add((*path, name))
    return found


def reads(
    settings: Settings, recipe: str, values: dict, reply, dataset: str | None = None
) -> tuple[set[tuple], set[tuple]]:
    """(keys read, every key) of one run of `recipe` made by `Run` on the scripted backend; `reply`
    answers each request and may look at the run's candidates (`reply.candidates`)."""
    run_dir = open_run(settings, RunRequest(recipe, values, dataset=dataset, llm="fake", shard_size=100))
    run = Run(settings, run_dir, backends={"fake": ScriptedBackend(default=reply)})
    seen: set[tuple] = set()
    run.__dict__["recipe"] = run.recipe_class(Tracked(run.config, (), seen), run.context)
    try:
        for stage in PLAN:
            stage.make_all(run)
            if stage is CONSTRUCT_STAGE:
                reply.candidates = run.candidates
        publish(run)
    except NothingSurvived:  # some runs here drop every item on purpose: their keys were still read
        pass
    finally:
        run.close()
        run_dir.release()
    return seen, leaves(run.config)


class Teacher:
    """Plays every model role of a multihop run; the teacher searches once, then answers right, so
    the rejection keys (best-of-n, malformed calls, tool calls) are consulted."""

    candidates: list = []

    def __call__(self, request):
        if request.stage == "distill":
            item = next((c for c in self.candidates if c.question in str(request.messages)), None)
            if len(request.messages) <= 3 and item is not None:
                return search_call(item.answer)
            return f"<answer>{item.answer if item else 'unknown'}</answer>"
        return dry_run_reply(request)


def search_call(query: str) -> str:
    return '<tool_call>{"name": "search", "arguments": {"query": ' + json.dumps(query) + "}}</tool_call>"


NOT_IN = {
    "selfplay": {
        # the ambiguity rule needs a graph to check a rival answer against; self-play refuses drop_ambiguous
        "consensus.ambiguous_min_votes",
        # self-play always runs its panel (the curriculum is its success rate): the key may only be true
        "panel.enabled",
        # self-play's items have no graph edges to cut evidence down to: whole documents is the only choice
        "panel.gold_evidence",
    },
}
"""Keys a recipe inherits from a shared config group but cannot use, and why."""
NOT_IN["curate"] = {
    # a curated item has no graph edges to cut its evidence down to: whole documents only
    "panel.gold_evidence",
    # no graph to check a rival answer against (as in self-play): drop_ambiguous stays off
    "consensus.ambiguous_min_votes",
}
GOLD_SOLVERS = (
    "panel.solvers=[{name: a, model: fake, conditions: [search, gold_evidence], k: 2}, "
    "{name: b, model: fake, conditions: [search], k: 2}]"
)


def unread(found: list[tuple[set, set]], allowed: set[str] = frozenset()) -> list[str]:
    seen = set().union(*(read for read, _ in found))
    keys = set().union(*(every for _, every in found))
    return sorted(key for key in (".".join(path) for path in keys - seen) if key not in allowed)


def test_every_multihop_key_is_read(tmp_path):
    settings = Settings(home=tmp_path)
    base = ["seed=3", "hops=[2]", "panel.judge_model=fake"]
    found = [reads(settings, "multihop", apply_params({}, [*base, "n=2"]), Teacher())]  # a first version
    with Catalog.open(settings, read_only=True) as catalog:
        first = catalog.resolve("multihop")
    items = list(iter_records(settings, first, "items"))
    benchmark = tmp_path / "benchmark.jsonl"  # the first version's questions, one with its answer: contaminated
    rows = [
        {"question": items[0].question, "answer": items[0].answer},
        {"question": items[1].question, "answer": "Nobody"},
    ]
    benchmark.write_text("".join(json.dumps(row) + "\n" for row in rows))
    found.append(reads(settings, "multihop", apply_params({}, [*base, "n=4"]), Teacher()))  # near-dups of the first
    other = [
        *base,
        "n=4",
        f"checks.contamination.benchmarks=[{benchmark}]",
        "verbalizer=llm",
        "rephrase_judge_model=fake",
    ]
    other += ["distill.enabled=true", "distill.n=2", "distill.guided=true", "panel.gold_evidence=documents"]
    found.append(reads(settings, "multihop", apply_params({}, other), Teacher(), dataset="other"))
    longest = [*base, "n=2", "walk.policy=longest", "style=obfuscated", "distill.enabled=true", "distill.n=1"]
    longest += ["distill.agent.protocol=json"]
    found.append(reads(settings, "multihop", apply_params({}, longest), Teacher()))
    missing = unread(found)
    assert missing == [], missing


class SelfplayWorld(ScriptedWorld):
    """Self-play's scripted world, plus a teacher that searches once and answers right, and solvers
    that answer right from gold evidence."""

    candidates: list = []

    def __call__(self, request):
        if request.stage == "solver_gold_evidence":
            question = request.messages[-1]["content"].rsplit("Question: ", 1)[1].strip()
            return f"<answer>{self.answers[question]}</answer>"
        if request.stage == "distill":
            item = next((c for c in self.candidates if c.question in str(request.messages)), None)
            if len(request.messages) <= 3 and item is not None:
                return search_call(item.answer)
            return f"<answer>{item.answer if item else 'unknown'}</answer>"
        return super().__call__(request)


def test_every_selfplay_key_is_read(tmp_path):
    settings = Settings(home=tmp_path)
    world = SelfplayWorld("alternate")  # one world: it learns each question's answer when it proposes it
    found = [reads(settings, "selfplay", apply_params({}, [*params(), "n=2"]), world)]
    with Catalog.open(settings, read_only=True) as catalog:
        first = catalog.resolve("selfplay")
    items = list(iter_records(settings, first, "items"))
    found.append(reads(settings, "selfplay", apply_params({}, params()), world))  # near-duplicates of the first
    benchmark = tmp_path / "benchmark.jsonl"  # the first version's questions, one with its answer: contaminated
    rows = [
        {"question": items[0].question, "answer": items[0].answer},
        {"question": items[1].question, "answer": "Nobody"},
    ]
    benchmark.write_text("".join(json.dumps(row) + "\n" for row in rows))
    other = [*params(), f"checks.contamination.benchmarks=[{benchmark}]", "distill.enabled=true", "distill.n=2"]
    found.append(reads(settings, "selfplay", apply_params({}, other), world, dataset="other"))
    for policy in ("always", "never"):  # solved at the band's edge and beyond: the curriculum's bounds
        world.policy = policy
        unsized = [param for param in params() if not param.startswith("per_round")]  # sized by n x oversample
        gold = [*unsized, "consensus.drop_unanswerable=true", f"seed={len(found)}", GOLD_SOLVERS]
        fresh = Settings(home=tmp_path / policy)  # no cached solver replies of another policy
        found.append(reads(fresh, "selfplay", apply_params({}, gold), world))
    missing = unread(found, NOT_IN["selfplay"])
    assert missing == [], missing


def test_every_curate_key_is_read(tmp_path):
    from test_curate import QUESTIONS, rollout

    settings = Settings(home=tmp_path)
    found = [reads(settings, "multihop", apply_params({}, ["n=2", "seed=3", "hops=[2]"]), Teacher(), dataset="made")]
    data = tmp_path / "data.jsonl"
    rows = [
        {"messages": rollout(q, a), "task": {"question": q, "gold": [a], "also": [a.lower()]}, "score": index % 2}
        for index, (q, a, _) in enumerate(QUESTIONS)
    ]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    benchmark = tmp_path / "benchmark.jsonl"  # verbatim, reworded with and without the answer
    bench = [
        {"question": QUESTIONS[0][0]},
        {"question": QUESTIONS[1][0], "answer": QUESTIONS[1][1]},
        {"question": QUESTIONS[2][2]},
        {"question": QUESTIONS[3][2], "answer": QUESTIONS[3][1]},
    ]
    benchmark.write_text("".join(json.dumps(row) + "\n" for row in bench))
    fields = [
        "fields.question_field=task.question",
        "fields.answer_field=task.gold",
        "fields.aliases_field=task.also",
        "fields.outcome_field=score",
        "fields.outcome_threshold=1",
        "strict=true",
    ]
    checks = "checks=[format, leakage, dedup, near_dup, contamination, shortcut, outcome]"
    curate = [
        f"source={data}",
        *fields,
        checks,
        "checks.near_dup.against=[made]",
        f"checks.contamination.benchmarks=[{benchmark}]",
    ]
    curate += ["panel.enabled=true", "panel.judge_model=fake", GOLD_SOLVERS, "consensus.drop_unanswerable=true"]
    curate += ["distill.enabled=true", "distill.n=2"]
    found.append(reads(settings, "curate", apply_params({}, curate), Teacher(), dataset="curated"))
    version = [
        "source=curated",
        checks,
        "checks.near_dup.against=[curated]",
        f"world.corpus={CORPUS}",
        "world.passage_words=50",
    ]  # near-dups
    found.append(reads(settings, "curate", apply_params({}, version), Teacher(), dataset="again"))
    missing = unread([found[1], found[2]], NOT_IN["curate"])
    assert missing == [], missing


@pytest.mark.parametrize("recipe", ["multihop", "selfplay"])
def test_the_tracker_reports_a_key_nobody_reads(recipe):
    from synth.pipelines.recipes import get_recipe

    config = get_recipe(recipe).Config()
    seen: set = set()
    tracked = Tracked(config, (), seen)
    tracked.panel.retrieval_k  # noqa: B018  (a read)
    assert ("panel", "retrieval_k") in seen and ("seed",) not in seen
    assert ("panel", "retrieval_k") in leaves(config)

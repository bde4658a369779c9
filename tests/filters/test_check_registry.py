"""A check defined outside the package (tests/filters/word_budget_check.py: one file, one
registration) is switched on in every recipe by config alone, runs where the list puts it, and
leaves its verdicts and funnel stage in the published version."""

import sys
from pathlib import Path

import pytest

from synth.config import apply_params
from synth.errors import ConfigError
from synth.llm.fake import ScriptedBackend
from synth.pipelines.recipes import RECIPES
from synth.run.generate import generate
from synth.settings import Settings
from synth.store.reader import iter_records

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
from word_budget_check import WordBudgetConfig  # noqa: E402

LIMIT = 14


@pytest.mark.parametrize("recipe", ["multihop", "selfplay", "curate"])
def test_every_recipe_takes_the_new_check_by_config_alone(recipe):
    config_type = RECIPES[recipe].load().Config
    config = config_type.model_validate(apply_params({}, [f"checks.word_budget.max_words={LIMIT}"]))
    assert isinstance(config.checks[-1], WordBudgetConfig) and config.checks[-1].max_words == LIMIT
    assert len(config.checks) == len(config_type().checks) + 1  # appended to the recipe's own list
    first = config_type.model_validate(apply_params({}, ["checks=[word_budget, format]"]))
    assert [check.kind for check in first.checks] == ["word_budget", "format"]  # a list is the whole wiring


def test_an_unknown_or_repeated_check_is_a_one_line_error():
    from synth.config import build_config

    config_type = RECIPES["multihop"].load().Config
    with pytest.raises(ConfigError, match="unknown check 'wordbudget'.*word_budget"):
        build_config(config_type, apply_params({}, ["checks=[format, wordbudget]"]), "multihop")
    with pytest.raises(ConfigError, match="repeated: format"):
        build_config(config_type, {"checks": ["format", "format"]}, "multihop")


def _published_checks(settings, version):
    verdicts = [v for v in iter_records(settings, version, "verdicts") if v.filter == "word_budget"]
    items = list(iter_records(settings, version, "items"))
    return verdicts, items, [stage.stage for stage in version.funnel]


def test_multihop_and_curate_run_the_new_check_and_publish_its_verdicts(tmp_path):
    settings = Settings(home=tmp_path)
    made = generate(
        settings, "multihop", ["n=6", "hops=[2,3]", f"checks.word_budget.max_words={LIMIT}"], llm="fake"
    ).version
    verdicts, items, stages = _published_checks(settings, made)
    assert stages.index("word_budget") == stages.index("shortcut") + 1  # after the recipe's own checks
    assert verdicts and all(len(item.question.split()) <= LIMIT for item in items)
    assert any(not verdict.kept and verdict.reason == "over_word_budget" for verdict in verdicts)

    lengths = sorted(len(item.question.split()) for item in items)
    shorter = lengths[len(lengths) // 2]  # about half the made items are longer
    curated = generate(
        settings,
        "curate",
        ["source=multihop", "checks=[word_budget]", f"checks.word_budget.max_words={shorter}"],
        "small",
    ).version
    verdicts, items, stages = _published_checks(settings, curated)
    assert stages == ["source", "word_budget"]
    assert items and all(len(item.question.split()) <= shorter for item in items)
    assert len(verdicts) == len(list(iter_records(settings, made, "items")))


def test_selfplay_runs_the_new_check_among_its_gates(tmp_path):
    from test_selfplay import ScriptedWorld, params

    settings = Settings(home=tmp_path)
    backend = ScriptedBackend(default=ScriptedWorld("alternate"), name="dry-run")
    version = generate(
        settings,
        "selfplay",
        params("checks.word_budget.max_words=60"),
        llm="fake",
        backends={"fake": backend},
    ).version
    verdicts, _, stages = _published_checks(settings, version)
    assert stages.index("word_budget") < stages.index("rag_verification")  # a cheap gate, before the judge
    assert verdicts


OLD_KEYS = """\
flows:
  old-multihop:
    recipe: multihop
    params:
      near_dup: {threshold: 0.7}
      shortcut: {enabled: false}
      retriever: bm25
      contract: synth-answer-tool
      world: {scale: 100, max_answers: 2}
  old-selfplay:
    recipe: selfplay
    params:
      min_distinct_searches: 3
      corpus: corpus.jsonl
      retrieval_k: 5
  old-curate:
    recipe: curate
    params:
      source: somewhere
      checks: [format, near_dup, contamination, outcome]
      against: [other]
      contamination: {benchmarks: [dev.jsonl]}
"""


def test_flows_files_with_the_old_keys_still_validate_and_say_where_the_keys_went(tmp_path, run_cli):
    path = tmp_path / "flows.yaml"
    path.write_text(OLD_KEYS)
    code, out, err = run_cli("flows", "validate", "--flows-file", str(path))
    assert code == 0 and "ok (3 flows" in out, err
    moved = [line for line in err.splitlines() if line.startswith("deprecated:")]
    assert {
        "'near_dup' is now 'checks.near_dup'",
        "'against' is now 'checks.near_dup.against'",
        "'retriever' is now 'world.retriever'",
        "'world.scale, world.max_answers' is now 'multiplicity.*'",
    } <= {line.split("config key ", 1)[1].split(";")[0] for line in moved}
    multihop = (
        RECIPES["multihop"]
        .load()
        .Config.model_validate(
            {"retriever": "hybrid", "contract": "searchr1", "world": {"scale": 100, "max_answers": 2}}
        )
    )
    assert (multihop.world.retriever, multihop.world.contract) == ("hybrid", "searchr1")
    assert (multihop.multiplicity.scale, multihop.multiplicity.max_answers) == (100, 2)
    selfplay = RECIPES["selfplay"].load().Config.model_validate({"corpus": "c.jsonl", "retrieval_k": 5})
    assert (selfplay.world.corpus, selfplay.world.retrieval_k) == ("c.jsonl", 5)
    config = (
        RECIPES["curate"]
        .load()
        .Config.model_validate(
            {
                "checks": ["format", "near_dup", "contamination"],
                "against": ["other"],
                "contamination": {"benchmarks": ["x"]},
            }
        )
    )
    near_dup, contamination = config.checks[1], config.checks[2]
    assert near_dup.against == ["other"] and [str(path) for path in contamination.benchmarks] == ["x"]
    assert config.outcome is False  # the old list left `outcome` out

"""The verl command a verl export prints uses keys verl's own config has, and puts the reward where
verl's trainer hands it to its reward loader; the validation split beside the train file is
chosen by item id.

The key lists in tests/fixtures/verl/ were recorded from verl itself (examples/
record_verl_config_keys.py composes 0.9.1's ppo_trainer config; 0.7.0's is its shipped
_generated_ppo_trainer.yaml). Which reward key the loader reads is verl's source:
`get_custom_reward_fn` in verl/trainer/ppo/reward.py reads `config.reward.custom_reward_function`
from 0.7.1 on (0.7.1, 0.8.0, 0.9.1 checked) and the top-level `custom_reward_function` in 0.7.0 and
0.6.1; the top-level key still exists in 0.9.1's config, so a key list alone cannot catch the
wrong one."""

import shlex
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from synth.contract.contracts import SYNTH
from synth.store.export import export_version
from synth.store.publish import VersionSpec, publish_version

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "verl"
LOADER_READS = {"0.9.1": "reward.custom_reward_function", "0.7.0": "custom_reward_function"}


def recorded_keys(version: str) -> set[str]:
    lines = (RECORDED / f"config_keys_{version}.txt").read_text().splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def printed_overrides(notes: list[str]) -> list[str]:
    command = next(note for note in notes if note.startswith("train: "))
    words = shlex.split(command.removeprefix("train: "), posix=False)
    return words[words.index("verl.trainer.main_ppo") + 1 :]


@pytest.fixture
def published(settings, make_item):
    items = [make_item(index) for index in range(40)]
    return publish_version(settings, VersionSpec(name="rl", recipe="multihop"), {"items": items})


@pytest.mark.parametrize("version", sorted(LOADER_READS))
def test_every_printed_key_is_in_verls_config_and_the_reward_is_where_its_loader_reads(
    settings, published, tmp_path, version
):
    result = export_version(settings, "rl", "verl", tmp_path / "train.parquet", verl_version=version)
    overrides = printed_overrides(result.notes)
    keys = [override.split("=", 1)[0] for override in overrides]
    assert sorted(set(keys) - recorded_keys(version)) == []
    assert f"{LOADER_READS[version]}.path" in keys and f"{LOADER_READS[version]}.name" in keys
    values = dict(override.split("=", 1) for override in overrides)
    assert values["data.val_files"] == "$PWD/train-val.parquet" and values["data.train_files"] == "$PWD/train.parquet"
    # batch sizes no larger than the data, or verl's dataloader has no full batch to give
    assert int(values["data.train_batch_size"]) <= result.rows
    assert int(values["actor_rollout_ref.actor.ppo_mini_batch_size"]) <= int(values["data.train_batch_size"])
    # verl runs only a turn's first call unless told; the contract's agents keep to its cap, so RL runs them all
    assert values["actor_rollout_ref.rollout.multi_turn.max_parallel_calls"] == str(SYNTH.max_parallel_calls)


def extra(path: Path, field: str) -> list:
    return pq.read_table(path).column("extra_info").combine_chunks().field(field).to_pylist()


def test_the_validation_split_is_chosen_by_item_id(settings, published, make_item, tmp_path):
    first = export_version(settings, "rl", "verl", tmp_path / "a" / "train.parquet", validation_fraction=0.25)
    train, val = (
        set(extra(tmp_path / "a" / "train.parquet", "item_id")),
        set(extra(tmp_path / "a" / "train-val.parquet", "item_id")),
    )
    assert train.isdisjoint(val) and first.rows == len(train) and 0 < len(val) < 20
    assert 30 <= len(train | val) < 40  # the test split (0.1 by default) is in neither file
    assert set(extra(tmp_path / "a" / "train-val.parquet", "split")) == {"validation"}
    assert set(extra(tmp_path / "a" / "train.parquet", "split")) == {"train"}
    # a later version with more items keeps every earlier item on its side
    publish_version(settings, VersionSpec(name="rl", recipe="multihop"), {"items": [make_item(i) for i in range(60)]})
    export_version(settings, "rl@2", "verl", tmp_path / "b" / "train.parquet", validation_fraction=0.25)
    later = set(extra(tmp_path / "b" / "train-val.parquet", "item_id"))
    assert val <= later and later.isdisjoint(train)


def test_a_version_that_is_not_a_release_is_one_line(settings, published, tmp_path):
    from synth.errors import ConfigError

    with pytest.raises(ConfigError, match="--verl-version 'latest' is not a release number"):
        export_version(settings, "rl", "verl", tmp_path / "train.parquet", verl_version="latest")


@pytest.mark.parametrize("policy", ["archive", "summarize"])
def test_a_teacher_context_policy_runs_in_verl_through_the_exported_agent_loop(settings, make_item, tmp_path, policy):
    """A version whose teacher ran under a context policy: the rows name synth's agent loop, its
    config carries the teacher's settings, and the command points verl's V1 trainer at it, with keys
    verl 0.9.1's config has."""
    import yaml

    agent = {"context": policy, "max_turns": 120, "context_tokens": 6000, "keep_results": 3, "turn_tokens": 200}
    items = [make_item(index) for index in range(40)]
    spec = VersionSpec(name="long", recipe="multihop", config={"distill": {"agent": agent}})
    publish_version(settings, spec, {"items": items})
    result = export_version(settings, "long", "verl", tmp_path / "train.parquet", verl_version="0.9.1")
    overrides = printed_overrides(result.notes)
    assert sorted({o.split("=", 1)[0] for o in overrides} - recorded_keys("0.9.1")) == []
    values = dict(override.split("=", 1) for override in overrides)
    assert values["actor_rollout_ref.rollout.agent.agent_loop_config_path"] == "$PWD/agent_loop.yaml"
    assert values["trainer.use_v1"] == "true" and values["data.max_prompt_length"] == "6000"
    assert values["data.max_response_length"] == ("6000" if policy == "summarize" else "4096")
    assert values["actor_rollout_ref.rollout.multi_turn.max_assistant_turns"] == "120"  # the teacher's turns
    [loop] = yaml.safe_load((tmp_path / "agent_loop.yaml").read_text())
    assert loop == {
        "name": "synth_context_agent",
        "_target_": "synth_verl_agent_loop.SynthContextAgentLoop",
        "context": policy,
        "keep_results": 3,
        "summarize_at": 3000,  # half the context, as the teacher's agent defaults it
        "summary_tokens": 200,
    }
    assert "class SynthContextAgentLoop" in (tmp_path / "synth_verl_agent_loop.py").read_text()
    rows = pq.read_table(tmp_path / "train.parquet").to_pylist()
    assert {row["agent_name"] for row in rows} == {"synth_context_agent"}
    assert any(f"context policy {policy}" in note and "TRL" in note for note in result.notes)


def test_a_context_policy_for_a_verl_before_0_9_1_is_one_line(settings, make_item, tmp_path):
    from synth.errors import ConfigError

    spec = VersionSpec(name="long", recipe="multihop", config={"distill": {"agent": {"context": "archive"}}})
    publish_version(settings, spec, {"items": [make_item(index) for index in range(5)]})
    with pytest.raises(ConfigError, match="verl applies from 0.9.1 on .* --verl-version 0.9.1"):
        export_version(settings, "long", "verl", tmp_path / "train.parquet", verl_version="0.7.0")
    assert not (tmp_path / "train.parquet").exists()


def test_without_a_policy_the_rows_run_verls_own_tool_agent(settings, published, tmp_path):
    result = export_version(settings, "rl", "verl", tmp_path / "train.parquet", verl_version="0.9.1")
    assert {row["agent_name"] for row in pq.read_table(tmp_path / "train.parquet").to_pylist()} == {"tool_agent"}
    assert not (tmp_path / "agent_loop.yaml").exists()
    assert "agent_loop_config_path" not in " ".join(printed_overrides(result.notes))


def test_the_exported_agent_loop_needs_only_verl_and_the_contract_file():
    """verl imports synth_verl_agent_loop.py from the export folder, where synth is not installed."""
    import ast
    import sys

    from synth.contract import portable

    tree = ast.parse((Path(portable.__file__).parent / "verl_agent_loop.py").read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    outside = {name for name in imported if name.split(".")[0] not in sys.stdlib_module_names}
    assert outside == {
        "synth_contract",
        "verl.experimental.agent_loop.agent_loop",
        "verl.experimental.agent_loop.tool_agent_loop",
    }

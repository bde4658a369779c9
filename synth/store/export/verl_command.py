"""The verl command a verl export prints, in the config schema of the verl release the user runs.

verl moved its reward keys in 0.7.1: from then on its reward loader (`get_custom_reward_fn` in
verl/trainer/ppo/reward.py) reads `reward.custom_reward_function.*`, and the top-level
`custom_reward_function.*` is still accepted but only migrated by the fully-async trainer, so with
`main_ppo` it is never read (every rollout then fails with NotImplementedError for a `synth_*` data
source); 0.7.0 and older read the top-level key. The version is `--verl-version`, else the
installed verl's when synth's environment has one, else the newest release known here.
"""

import re
from importlib import metadata

from synth.errors import ConfigError

NEWEST_KNOWN = "0.9.1"
"""The newest verl release the printed keys were checked against (tests/fixtures/verl_config_keys)."""
PLACEHOLDER_MODEL = "$MODEL"


def verl_version(asked: str | None) -> str:
    """`asked`, else the installed verl's version, else the newest known release."""
    if asked:
        release(asked)
        return asked
    try:
        return metadata.version("verl")
    except metadata.PackageNotFoundError:
        return NEWEST_KNOWN


def release(version: str) -> tuple[int, int, int]:
    found = re.match(r"(\d+)\.(\d+)(?:\.(\d+))?", version.strip())
    if found is None:
        raise ConfigError(f"--verl-version {version!r} is not a release number like 0.9.1")
    return int(found.group(1)), int(found.group(2)), int(found.group(3) or 0)


def reward_prefix(version: str) -> str:
    """Where `main_ppo` of this verl release reads the custom reward function from."""
    return "reward.custom_reward_function" if release(version) >= (0, 7, 1) else "custom_reward_function"


def overrides(
    version: str,
    files: tuple[str, str, str],
    train_items: int,
    max_tool_response: int,
    max_turns: int,
    max_parallel_calls: int,
    reward_module: str | None,
    keep_order: bool = False,
    agent_loop_config: str | None = None,
    lengths: tuple[int, int] = (2048, 4096),
) -> list[str]:
    """The Hydra overrides of `python -m verl.trainer.main_ppo` for an export: its files (train,
    validation, tool config; relative to its folder), and a GRPO baseline for one GPU that verl's
    config checks accept (batch sizes no larger than the data, micro batches set, vLLM rollouts
    with the agent's turn budget and the contract's parallel calls, where verl's default runs only
    a turn's first call), which a user scales with more overrides. `agent_loop_config`: the agent
    loop a context policy runs (synth.store.export.verl_context), on verl's V1 trainer; `lengths`:
    the most prompt and response tokens of a training sequence."""
    train, val, tool_config = files
    batch = max(1, min(64, train_items))
    found = [
        "algorithm.adv_estimator=grpo",
        f"data.train_files=$PWD/{train}",
        f"data.val_files=$PWD/{val}",
        f"data.train_batch_size={batch}",
        f"data.max_prompt_length={lengths[0]}",
        f"data.max_response_length={lengths[1]}",
        "data.return_raw_chat=true",
        f"actor_rollout_ref.model.path={PLACEHOLDER_MODEL}",
        f"actor_rollout_ref.actor.ppo_mini_batch_size={batch}",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=4",
        "actor_rollout_ref.actor.use_kl_loss=true",
        "actor_rollout_ref.actor.kl_loss_coef=0.001",
        "actor_rollout_ref.rollout.name=vllm",
        "actor_rollout_ref.rollout.n=5",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4",
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu=4",
        "actor_rollout_ref.rollout.multi_turn.enable=true",
        f"actor_rollout_ref.rollout.multi_turn.max_assistant_turns={max_turns}",
        f"actor_rollout_ref.rollout.multi_turn.max_parallel_calls={max_parallel_calls}",
        f"actor_rollout_ref.rollout.multi_turn.tool_config_path=$PWD/{tool_config}",
        f"actor_rollout_ref.rollout.multi_turn.max_tool_response_length={max_tool_response}",
        "trainer.n_gpus_per_node=1",
        "trainer.logger=[console]",
    ]
    if agent_loop_config is not None:
        found += [
            f"actor_rollout_ref.rollout.agent.agent_loop_config_path=$PWD/{agent_loop_config}",
            "trainer.use_v1=true",
        ]
    if keep_order:  # a curriculum: verl shuffles the train file unless told not to
        found.append("data.shuffle=false")
    if reward_module is not None:
        prefix = reward_prefix(version)
        found += [f"{prefix}.path=$PWD/{reward_module}", f"{prefix}.name=compute_score"]
    return found


def keys(printed: list[str]) -> list[str]:
    """The config keys a list of overrides sets."""
    return [override.split("=", 1)[0].lstrip("+") for override in printed]

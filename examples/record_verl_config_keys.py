"""Record every key of the installed verl's PPO config, as `main_ppo` composes it, one per line.

Run in a virtualenv with verl (see examples/check_verl_export.py); the file it writes is the list
the CI test checks the printed command's overrides against (tests/fixtures/verl/):

    /tmp/verl/bin/python examples/record_verl_config_keys.py tests/fixtures/verl/config_keys_0.9.1.txt
"""

import sys
from importlib import metadata


def leaves(node, prefix: str = "") -> list[str]:
    from omegaconf import DictConfig

    found = []
    for key in node.keys():
        value = node._get_node(key)
        path = f"{prefix}{key}"
        if isinstance(value, DictConfig) and len(value) > 0:
            found.append(path)
            found += leaves(value, path + ".")
        else:
            found.append(path)
    return found


def main() -> None:
    from hydra import compose, initialize_config_module

    with initialize_config_module(config_module="verl.trainer.config", version_base=None):
        config = compose(config_name="ppo_trainer")
    keys = sorted(leaves(config))
    header = f"# verl {metadata.version('verl')}: keys of the ppo_trainer config as main_ppo composes it\n"
    with open(sys.argv[1], "w", encoding="utf-8") as handle:
        handle.write(header + "\n".join(keys) + "\n")
    print(f"{len(keys)} keys of verl {metadata.version('verl')} written to {sys.argv[1]}")


if __name__ == "__main__":
    main()

"""Quiet, offline defaults for Prefect, set before it is imported and only where the user has not
set them: a local PREFECT_HOME under the data root, no analytics (the server otherwise calls an
outside host), and a start-up timeout long enough for a temporary server on a small machine."""

import os
from pathlib import Path

from synth.settings import Settings

PREFECT_DEFAULTS = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_CLI_PROMPT": "false",
}


def configure_prefect(settings: Settings) -> dict[str, str]:
    """Set the defaults into this process's environment (children inherit them); returns what was set."""
    home = Path(os.environ.get("PREFECT_HOME") or settings.home.absolute() / "prefect").expanduser()
    wanted = {**PREFECT_DEFAULTS, "PREFECT_HOME": str(home), "PREFECT_MEMO_STORE_PATH": str(home / "memo_store.toml")}
    applied = {key: value for key, value in wanted.items() if key not in os.environ}
    os.environ.update(applied)
    home.mkdir(parents=True, exist_ok=True)  # its database lives there
    return applied

"""Options shared by several commands."""

from pathlib import Path

import click

json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON instead of tables.")


def load_settings():
    from synth.settings import Settings

    return Settings()


def flows_file_option(help: str):
    """`--flows-file PATH` (default ./flows.yaml), with what the command reads from it."""
    return click.option(
        "--flows-file", type=click.Path(path_type=Path), default=Path("flows.yaml"), show_default=True, help=help
    )

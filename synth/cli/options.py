"""Options shared by several commands."""

from pathlib import Path

import click

json_option = click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON instead of tables.")


def load_settings():
    """The settings of this process; where the data root is a bucket, its local copy brought up to
    date first (synth.store.bucket_root), so every command reads what the bucket holds."""
    from synth.settings import Settings

    settings = Settings()
    if settings.bucket is not None:
        from synth.store.bucket_root import pull

        pull(settings)
    return settings


def flows_file_option(help: str):
    """`--flows-file PATH` (default ./flows.yaml), with what the command reads from it."""
    return click.option(
        "--flows-file", type=click.Path(path_type=Path), default=Path("flows.yaml"), show_default=True, help=help
    )

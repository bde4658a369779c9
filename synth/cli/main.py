"""The `synth` command. A thin layer: each command calls one library function.

Only click is imported at start-up; heavy libraries load inside the command that needs them, so
`synth --help` stays instant. Errors a user can fix (SynthError) print as one line, exit non-zero.
"""

import sys

import click

from synth import __version__
from synth.cli.audit import audit
from synth.cli.browse import browse
from synth.cli.curate import curate
from synth.cli.datasets import datasets
from synth.cli.evals import eval_command, evals
from synth.cli.export import export
from synth.cli.flows import flows
from synth.cli.generate import generate
from synth.cli.kg import kg
from synth.cli.mix import mix
from synth.cli.models import models
from synth.cli.recipes import recipes
from synth.cli.runs import runs
from synth.cli.search import search
from synth.cli.sql import sql


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="synth")
def cli() -> None:
    """Make versioned, difficulty-labeled training data for search- and tool-using LLM agents.

    Outputs go to the data root, ./synth-data by default (set SYNTH_HOME to move it).
    """


cli.add_command(generate)
cli.add_command(curate)
cli.add_command(datasets)
cli.add_command(sql)
cli.add_command(browse)
cli.add_command(audit)
cli.add_command(mix)
cli.add_command(export)
cli.add_command(eval_command)
cli.add_command(evals)
cli.add_command(recipes)
cli.add_command(models)
cli.add_command(kg)
cli.add_command(search)
cli.add_command(flows)
cli.add_command(runs)


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the CLI, turning user-fixable errors into one-line messages."""
    from synth.errors import INTERRUPTED, SynthError
    from synth.redact import install_logging_filter, redact

    install_logging_filter()
    _one_line_deprecations()

    try:
        cli.main(args=argv, prog_name="synth", standalone_mode=False)
        sys.exit(0)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except click.exceptions.Abort:  # click's form of Ctrl-C (after a newline, ending the ^C line)
        click.echo(INTERRUPTED, err=True)
        sys.exit(130)
    except SynthError as error:
        click.echo(redact(f"error: {error}"), err=True)
        sys.exit(error.exit_code)
    except (
        OSError
    ) as error:  # the file system refused (full disk, permissions, a vanished path): say which, in one line
        where = f": {error.filename}" if error.filename else ""
        click.echo(f"error: {error.strerror or error}{where}; check the path, its permissions and free space", err=True)
        sys.exit(1)
    except KeyboardInterrupt:
        click.echo(INTERRUPTED, err=True)
        sys.exit(130)
    except RuntimeError as error:  # DuckDB's own Ctrl-C handler ends a query with this
        if str(error).strip() != "Query interrupted":
            raise
        click.echo(INTERRUPTED, err=True)
        sys.exit(130)


def _one_line_deprecations() -> None:
    """A moved config key is said once, as `deprecated: ...`, not as a warning with a source line."""
    import warnings

    from synth.errors import DeprecatedKey

    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):
        if issubclass(category, DeprecatedKey):
            click.echo(f"deprecated: {message}", err=True)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show


if __name__ == "__main__":
    main()

"""Errors a user can act on. The CLI prints their message as one line and exits non-zero."""

INTERRUPTED = "interrupted; finished work is kept, rerun to resume"
"""What Ctrl-C prints, wherever it lands (exit code 130)."""


class SynthError(Exception):
    """Base of every error whose message names the problem and the fix; never shown with a traceback."""

    exit_code = 1


class ConfigError(SynthError):
    """A recipe parameter, setting or config file is wrong."""

    exit_code = 2


class NotFoundError(SynthError):
    """A dataset, version, recipe or file the user named does not exist."""


class CatalogError(SynthError):
    """The catalog cannot be opened, is locked, or refused a statement."""


class InputFileError(SynthError):
    """A file the user gave cannot be read as the format they named (the message names file and row)."""

    exit_code = 2


class OutputError(SynthError):
    """An output file or folder cannot be written (permissions, full disk); nothing half-written is left."""


class StoreError(SynthError):
    """An object store stayed unreachable, throttling or failing after retries with backoff (nothing is
    published from a run whose writes failed)."""


class ModelFailureError(SynthError):
    """Too many model calls of one stage failed (the failure gate): nothing is published."""

    exit_code = 3


class BudgetExhausted(SynthError):
    """The run's token or cost budget ran out: it stopped, resumable, and published nothing."""

    exit_code = 4


class RunBusyError(SynthError):
    """Another process is already running or publishing the same run."""

    exit_code = 5


class NothingSurvived(SynthError):
    """Every candidate of a run was dropped: nothing is published (an empty version helps no one),
    and the message says where the candidates went."""

    exit_code = 6


class DeprecatedKey(FutureWarning):
    """A config key that moved: still read, said once in one line (the CLI prints it as `deprecated: ...`)."""

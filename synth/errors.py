"""Errors a user can act on. The CLI prints their message as one line and exits non-zero."""


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

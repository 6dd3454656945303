"""Errors a user can cause, reported by the CLI as one line and exit code 2."""


class MemsimError(Exception):
    """Base class of every error memsim raises on purpose."""


class UsageError(MemsimError):
    """Bad input from the user: an unknown name, a malformed file, an invalid option value."""

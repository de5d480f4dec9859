"""Errors a use case raises for input the user can fix: shown as one line, exit code 2."""

from __future__ import annotations


class UsageError(ValueError):
    """Bad input: a value, an option combination or a reference the user can correct (the message says how)."""

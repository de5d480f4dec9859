"""The error of a `--env NAME=<runtime>:SPEC` that the R or Java worker cannot use (its grammar, `PACKAGE==VERSION
…`, is parsed with every spec's: model/env_request.py `parse_pins`)."""

from __future__ import annotations

from collections.abc import Sequence

#: a runtime's exact pins: each package and its version (None: the one its worker is built with)
Pins = Sequence[tuple[str, str | None]]


class PinError(ValueError):
    """A runtime environment spec that cannot be used; the message is one line that says what to do."""

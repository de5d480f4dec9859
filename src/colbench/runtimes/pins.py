"""`PACKAGE==VERSION …`: the exact pins of a `--env NAME=<runtime>:SPEC` for the R and Java workers."""

from __future__ import annotations

import re
import shlex

_PIN_RE = re.compile(r"([A-Za-z][A-Za-z0-9._-]*)(?:==([A-Za-z0-9][A-Za-z0-9._-]*))?")


class PinError(ValueError):
    """A runtime environment spec that cannot be used; the message is one line that says what to do."""


def parse_pins(spec: str) -> list[tuple[str, str | None]]:
    """`pkg==1.2.3 other` → [("pkg", "1.2.3"), ("other", None)]; only exact pins (one version per package)."""
    try:
        tokens = shlex.split(spec)
    except ValueError as exc:
        raise PinError(f"cannot split {spec!r}: {exc}") from None
    pins = []
    for token in tokens:
        match = _PIN_RE.fullmatch(token)
        if not match:
            raise PinError(f"{token!r}: pin exact versions as PACKAGE==VERSION")
        pins.append((match.group(1), match.group(2)))
    if not pins:
        raise PinError("name what to pin, e.g. java:arrow==18.1.0 or r:data.table==1.14.8")
    return pins

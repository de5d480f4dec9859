"""The worker protocol's JSON Schema (`protocol.schema.json`): one definition of case.json and result.json that the
Python, R and Java workers are all held to (docs/protocol.md).

The orchestrator checks every report a worker writes against it before the report counts, so a worker in any
language that drifts from the protocol (a checksum of the wrong type, a status colbench does not know, a count
below zero) gives an error result that names the field, not a record of the wrong shape in the store.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SCHEMA_PATH = Path(__file__).with_name("protocol.schema.json")


@functools.cache
def _validator(part: str) -> Any:
    import jsonschema  # only the orchestrator checks; a worker never loads it

    schema = json.loads(SCHEMA_PATH.read_text())
    return jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{part}"})


def _violation(part: str, document: Mapping[str, object]) -> str | None:
    error = next(iter(sorted(_validator(part).iter_errors(document), key=lambda e: list(e.absolute_path))), None)
    if error is None:
        return None
    where = ".".join(str(step) for step in error.absolute_path) or "the document"
    return f"{where}: {error.message[:200]}"


def report_violation(document: Mapping[str, object]) -> str | None:
    """Where a worker's result.json breaks the protocol (`field: why`, the first in document order), or None."""
    return _violation("report", document)


def case_violation(document: Mapping[str, object]) -> str | None:
    """Where a case.json breaks the protocol, or None."""
    return _violation("case", document)

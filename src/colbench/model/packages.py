"""Package names, one rule: PEP 503's canonical name (`Py_Arrow` → `py-arrow`), and the name a requirement string
starts with. Every comparison of package names (a spec's pins against the project's requirements, an era's
companions, a watch's identity, a history's versions) goes through these two."""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

#: what ends the name at the start of a requirement: an extra, a specifier, a marker, a URL
_NAME_END = re.compile(r"[\s\[<>=!~;@]")


def canonical_name(name: str) -> str:
    """PEP 503's normalized distribution name."""
    return str(canonicalize_name(name))


def requirement_name(requirement: str) -> str:
    """The canonical name a PEP 508 requirement starts with (`Pandas[pyarrow]<3` → `pandas`)."""
    return canonical_name(_NAME_END.split(requirement.strip(), maxsplit=1)[0])

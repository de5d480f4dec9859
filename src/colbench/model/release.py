"""One released version of a package, as its index lists it: what a sweep, a bisect and a watch measure, carried
by the environment request that builds it (model/env_request.py), listed by runtimes/releases.py."""

from __future__ import annotations

from dataclasses import dataclass

from packaging.tags import Tag


@dataclass(frozen=True)
class Release:
    """One version of a package. `skip` is why it cannot be tested here ("" when it can); `python` the newest
    installed Python (MAJOR.MINOR) its wheels install on ("" when it ships no wheel, or none fits); `wheel_tags`
    the tags of its wheels that are not yanked; `uploaded` when its last file was uploaded (RFC 3339; "" when the
    index does not say)."""

    version: str
    skip: str = ""
    python: str = ""
    wheel_tags: frozenset[Tag] = frozenset()
    uploaded: str = ""

"""Every git command colbench runs, and every tool it starts that may run git (uv, for `git+` URLs), runs with the
repository's own commands switched off: a repository is user input, and its `.git/config` can name programs that
git runs on `status` (core.fsmonitor), on commits and checkouts (hooks), to page output (core.pager) or to fetch
(an `ext::` transport). Settings given on the command line and in GIT_CONFIG_* win over every config file."""

from __future__ import annotations

import os
from collections.abc import Mapping

#: config that makes git run nothing a repository (or a user's config) names
SAFE_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", ""),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("protocol.ext.allow", "never"),
)


def git_command(*args: str) -> list[str]:
    """`git` with the safe config and no pager, then `args`."""
    config = [item for key, value in SAFE_CONFIG for item in ("-c", f"{key}={value}")]
    return ["git", *config, "--no-pager", *args]


def git_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """An environment for a process that may run git itself (uv building from a git URL): the safe config as
    GIT_CONFIG_COUNT/KEY/VALUE, no pager, no password prompt."""
    env = dict(os.environ if base is None else base)
    first = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    for offset, (key, value) in enumerate(SAFE_CONFIG):
        env[f"GIT_CONFIG_KEY_{first + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{first + offset}"] = value
    env["GIT_CONFIG_COUNT"] = str(first + len(SAFE_CONFIG))
    env.update({"GIT_PAGER": "cat", "PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env

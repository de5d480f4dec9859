"""Every git command colbench runs, and every tool it starts that may run git (uv, for `git+` URLs), runs with the
repository's own commands switched off: a repository is user input, and its `.git/config` can name programs that
git runs on `status` (core.fsmonitor), on commits and checkouts (hooks), to page output (core.pager) or to fetch
(an `ext::` transport). Settings given on the command line and in GIT_CONFIG_* win over every config file.

Arguments stay arguments: a repository given by the user is checked (`check_source`: a URL or an existing
directory, never a value starting with `-`) and every git call puts `--` (or `--end-of-options`) before URLs,
paths and refs. A password or token in a URL never reaches a file: `split_credentials` takes it out, so clones,
their config and lock files hold the URL without it, and `credential_env` hands it to git (or uv's git) from the
environment through a credential helper."""

from __future__ import annotations

import os
import re
import subprocess
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from colbench.paths import UnsafePath, expand_user
from colbench.processes import run_bounded

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


#: a local git command answers in seconds; a clone or fetch over the network is given minutes, then stopped
GIT_TIMEOUT_S = 600.0


def run_git(*args: str, env: Mapping[str, str] | None = None, timeout_s: float = GIT_TIMEOUT_S,
            what: str = "git") -> subprocess.CompletedProcess[str]:
    """`git_command(*args)` run bounded (colbench.processes): output captured as text, its process group killed
    past `timeout_s` (subprocess.TimeoutExpired, a one-line message); the exit status is the caller's to read."""
    return run_bounded(git_command(*args), timeout_s=timeout_s, what=what, env=git_env() if env is None else env)


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


# ------------------------------------------------------------------------------------ what a repository may be

#: schemes git may clone from here (`ext::` and other transports that run programs are not among them)
URL_SCHEMES = ("http", "https", "ssh", "git", "file")
_SCP_LIKE = re.compile(r"[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^\s:][^\s]*")


class GitSourceError(ValueError):
    """A repository given on the command line that is neither a URL git may clone nor an existing directory."""


def check_source(value: str, option: str = "--git") -> str:
    """`value` if it is a repository colbench may hand to git: a URL (http(s)://, ssh://, git://, file://, an
    optional `git+` in front, or scp-like `user@host:path`) or an existing local directory. A value that starts with
    `-` (git would read it as an option) or holds whitespace or control characters is refused, as is anything else;
    GitSourceError says what is allowed, in one line."""
    from colbench.redact import clip, printable, redact

    shown = clip(printable(redact(value)), 120)
    if not value or value.startswith("-"):
        raise GitSourceError(f"{option} {shown!r}: a repository is a URL or a directory, not an option")
    if is_url(value):
        _check_url(value.removeprefix("git+"), f"{option} {shown!r}")
        return value
    try:
        is_dir = expand_user(value, option).is_dir()
    except UnsafePath as exc:
        raise GitSourceError(str(exc)) from None
    if not is_dir:
        raise GitSourceError(f"{option} {shown!r}: neither a URL (https://…, ssh://…, user@host:repo) nor an "
                             "existing directory")
    return value


def _check_url(url: str, given: str) -> None:
    """A URL git may clone (`given` names the option and its value in the error)."""
    if any(c.isspace() or unicodedata.category(c)[0] == "C" for c in url):
        raise GitSourceError(f"{given}: a URL without spaces or control characters")
    try:
        parts = urlsplit(url) if "://" in url else None
        if parts is not None:
            parts.port  # noqa: B018 - a port that is not a number raises here, not in git
    except ValueError as exc:
        raise GitSourceError(f"{given}: not a URL ({exc})") from None
    if parts is None:
        if not _SCP_LIKE.fullmatch(url):
            raise GitSourceError(f"{given}: not a URL git can clone (https://host/repo, user@host:repo)")
        return
    scheme = parts.scheme.lower()
    if scheme not in URL_SCHEMES:
        raise GitSourceError(f"{given}: colbench clones {', '.join(URL_SCHEMES)} URLs only")
    if scheme != "file" and not parts.hostname:
        raise GitSourceError(f"{given}: the URL names no host")
    if scheme == "file" and not parts.path:
        raise GitSourceError(f"{given}: the file:// URL names no path")


def is_url(source: str) -> bool:
    """Whether a --git value names a remote (a URL, or scp-like `user@host:path`) rather than a directory."""
    return "://" in source or bool(_SCP_LIKE.fullmatch(source.removeprefix("git+")))


# ------------------------------------------------------------------------ credentials: in the environment only

_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^\s/?#@:\"'<>\[\]]*)"
                       r"(?::(?P<password>[^\s/?#\"'<>\[\]]*))?@(?P<host>[^\s/?#\"'<>@]+)")


@dataclass(frozen=True)
class Credential:
    """A user name and password (or token) taken out of a URL, and the origin (`https://host:port`) they are for."""

    origin: str
    username: str
    password: str


def split_credentials(text: str) -> tuple[str, tuple[Credential, ...]]:
    """`text` with the user name and password of every http(s) URL in it taken out (`https://u:p@host/r` →
    `https://host/r`), and what was taken. Other schemes keep their user (ssh's `git@` is no secret and no
    password is sent that way)."""
    found: list[Credential] = []

    def take(match: re.Match[str]) -> str:
        scheme = match["scheme"]
        base = scheme.lower().removeprefix("git+")
        if base not in ("http://", "https://") or not (match["user"] or match["password"]):
            return match.group(0)
        user, password = unquote(match["user"]), unquote(match["password"] or "")
        if match["password"] is None:  # https://TOKEN@host: a token as the user name
            user, password = user, ""
        found.append(Credential(f"{base}{match['host']}", user, password))
        return f"{scheme}{match['host']}"

    clean = _USERINFO.sub(take, text)
    return clean, tuple(dict.fromkeys(found))


#: git runs this for a credential: it prints the user name and password from the environment, and is silent for
#: the `store` and `erase` actions (nothing is written anywhere)
_HELPER = ('!f() { test "$1" = get || exit 0; printf "username=%s\\npassword=%s\\n" "${COLBENCH_GIT_USERNAME_N}" '
           '"${COLBENCH_GIT_PASSWORD_N}"; }; f')


def credential_env(credentials: Sequence[Credential], base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`git_env(base)` that also answers git's questions for these credentials from environment variables: a
    credential helper per origin (config in GIT_CONFIG_*, secrets in COLBENCH_GIT_* variables), after an empty
    `credential.helper` that switches off the helpers of the user's config, so no helper stores the password in a
    file either. Every git that uv or colbench starts with this environment gets the login; no file holds it."""
    env = git_env(base)
    if not credentials:
        return env
    first = int(env.get("GIT_CONFIG_COUNT", "0") or 0)
    config = [("credential.helper", "")]
    for number, credential in enumerate(credentials):
        config.append((f"credential.{credential.origin}.helper", _HELPER.replace("_N}", f"_{number}}}")))
        env[f"COLBENCH_GIT_USERNAME_{number}"] = credential.username
        env[f"COLBENCH_GIT_PASSWORD_{number}"] = credential.password
    for offset, (key, value) in enumerate(config):
        env[f"GIT_CONFIG_KEY_{first + offset}"] = key
        env[f"GIT_CONFIG_VALUE_{first + offset}"] = value
    env["GIT_CONFIG_COUNT"] = str(first + len(config))
    return env


def failure_reason(stderr: str, stdout: str = "") -> str:
    """Why a git command failed, in one line: its `fatal:` (else `error:`) line, not its last line (after a failed
    clone git may add lines that say the opposite of the cause)."""
    lines = [line.strip() for line in (stderr or stdout).splitlines() if line.strip()]
    for prefix in ("fatal:", "error:"):
        for line in lines:
            if line.lower().startswith(prefix):
                return line
    return lines[-1] if lines else "git failed"

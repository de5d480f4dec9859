"""Points to bisect that are not releases on an index: a directory (or a list) of wheels, and a git range.

- `--wheels DIR`: every wheel of the package in DIR, ordered by version (then build tag); a wheel that does not
  install on this interpreter is kept with that note, so the bisect says why it skipped it.
- `--wheels FILE`: one wheel path a line (relative paths from the file's directory; `#` starts a comment), in the
  order given: how nightly or per-commit builds whose versions do not order them are tested.
- `--git URL_OR_PATH`: the first-parent commits from good (included) to bad, oldest first, each installed by uv
  from source (`PACKAGE @ git+file:///…@SHA`). A URL is cloned once, without blobs, under $COLBENCH_HOME/git/
  to list its commits; uv fetches what it builds.

Each point is a `Build`: the label `--good`/`--bad` name and the tables show, and the requirement uv installs.
"""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import InvalidWheelFilename, parse_wheel_filename

from colbench.git import (
    GitSourceError,
    check_source,
    credential_env,
    failure_reason,
    is_url,
    run_git,
    split_credentials,
)
from colbench.model.packages import canonical_name
from colbench.paths import colbench_home, expand_user, owned, owned_dir
from colbench.redact import redact
from colbench.runtimes.releases import ReleaseError


@dataclass(frozen=True)
class Build:
    label: str
    requirement: str
    skip: str = ""


# --------------------------------------------------------------------------------------------------- wheels


def _wheel(path: Path, package: str | None) -> tuple[str, object, object] | None:
    """(distribution, version, build tag) of a wheel of `package` (any package when None)."""
    try:
        dist, version, build, _ = parse_wheel_filename(path.name)
    except InvalidWheelFilename:
        return None
    if package is not None and canonical_name(dist) != canonical_name(package):
        return None
    return str(dist), version, build


def _compatible(path: Path) -> bool:
    return bool(parse_wheel_filename(path.name)[3] & frozenset(sys_tags()))


def _labelled(paths: Sequence[Path]) -> list[Build]:
    """Builds labelled by version; where versions repeat, by file name (labels must tell points apart)."""
    versions = [str(parse_wheel_filename(p.name)[1]) for p in paths]
    out = []
    for path, version in zip(paths, versions, strict=True):
        label = version if versions.count(version) == 1 else path.name.removesuffix(".whl")
        out.append(Build(label, str(path), "" if _compatible(path) else "the wheel is not for this interpreter"))
    return out


def wheel_builds(source: Path, package: str | None = None) -> list[Build]:
    """The wheels of DIR in version order, or the wheels a listing FILE names, in its order."""
    source = expand_user(source, "--wheels").resolve()
    if source.is_dir():
        found = [(info, p) for p in sorted(source.glob("*.whl")) if (info := _wheel(p, package)) is not None]
        if not found:
            raise ReleaseError(f"--wheels {source}: no wheels{f' of {package}' if package else ''} there")
        dists = {canonical_name(info[0]) for info, _ in found}
        if len(dists) > 1:
            raise ReleaseError(f"--wheels {source}: wheels of {', '.join(sorted(dists))}: name one with --package")
        found.sort(key=lambda item: (item[0][1], item[0][2], item[1].name))
        return _labelled([p for _, p in found])
    if not source.is_file():
        raise ReleaseError(f"--wheels {source}: no such directory or file")
    paths = []
    for number, line in enumerate(source.read_text().splitlines(), 1):
        entry = line.split("#", 1)[0].strip()
        if not entry:
            continue
        path = expand_user(entry, f"--wheels {source}, line {number}:")
        path = (path if path.is_absolute() else source.parent / path).resolve()
        if not path.is_file() or _wheel(path, package) is None:
            raise ReleaseError(f"--wheels {source}, line {number}: {entry} is not a wheel file"
                               f"{f' of {package}' if package else ''}")
        paths.append(path)
    if len(paths) < 2:
        raise ReleaseError(f"--wheels {source}: list at least two wheels, one a line, oldest first")
    dists = {canonical_name(str(parse_wheel_filename(p.name)[0])) for p in paths}
    if len(dists) > 1:
        raise ReleaseError(f"--wheels {source}: wheels of {', '.join(sorted(dists))}: list one package's")
    return _labelled(paths)


def wheel_package(builds: Sequence[Build]) -> str:
    return str(parse_wheel_filename(Path(builds[0].requirement).name)[0])


# ------------------------------------------------------------------------------------------------------ git


def _git(repo: Path, *args: str, env: dict[str, str] | None = None) -> str:
    try:
        proc = run_git("-C", str(repo), *args, env=env, what=f"git {args[0]} in {repo}")
    except subprocess.TimeoutExpired as exc:
        raise ReleaseError(redact(str(exc))) from None
    if proc.returncode != 0:
        raise ReleaseError(redact(f"git {' '.join(args)} in {repo}: {failure_reason(proc.stderr, proc.stdout)}"))
    return proc.stdout.strip()


def _clone(url: str) -> Path:
    """A blob-less bare clone of `url` under $COLBENCH_HOME/git/ (fetched again when it exists). A password or
    token in the URL reaches git through the environment only (colbench.git.credential_env): the clone's config,
    and every file colbench writes, hold the URL without it."""
    clean, credentials = split_credentials(url)
    env = credential_env(credentials)
    root = owned_dir(colbench_home() / "git", "git clones directory")
    target = owned(root / hashlib.sha256(clean.encode()).hexdigest()[:16], "git clone")
    if (target / "HEAD").is_file():
        _git(target, "fetch", "--quiet", "--filter=blob:none", "origin", "+refs/heads/*:refs/heads/*",
             "+refs/tags/*:refs/tags/*", env=env)
        return target
    try:
        proc = run_git("clone", "--quiet", "--bare", "--filter=blob:none", "--", clean, str(target), env=env,
                       what=f"git clone {clean}")
    except subprocess.TimeoutExpired as exc:
        raise ReleaseError(redact(f"--git {url}: {exc}")) from None
    if proc.returncode != 0:
        raise ReleaseError(redact(f"--git {url}: cannot clone it ({failure_reason(proc.stderr, proc.stdout)})"))
    return target


def git_builds(source: str, good: str, bad: str, package: str) -> list[Build]:
    """good and every first-parent commit after it up to bad, oldest first, as requirements uv builds. `source` is
    checked first (colbench.git.check_source: a URL or an existing directory, never an option)."""
    try:
        check_source(source)
    except GitSourceError as exc:
        raise ReleaseError(str(exc)) from None
    if is_url(source):
        repo, url = _clone(source), source.removeprefix("git+")
    else:
        path = expand_user(source, "--git").resolve()
        if not path.is_dir():
            raise ReleaseError(f"--git {source}: no such directory")
        repo = path
        url = f"file://{path}"
    shas = {}
    for option, ref in (("--good", good), ("--bad", bad)):
        try:
            shas[option] = _git(repo, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
        except ReleaseError:
            raise ReleaseError(redact(f"{option} {ref}: no such commit in {source}")) from None
    if shas["--good"] == shas["--bad"]:
        raise ReleaseError(f"--good and --bad are the same commit ({shas['--good'][:12]}): name two")
    try:
        ancestor = run_git("-C", str(repo), "merge-base", "--is-ancestor", "--end-of-options", shas["--good"],
                           shas["--bad"], what="git merge-base")
    except subprocess.TimeoutExpired as exc:
        raise ReleaseError(redact(str(exc))) from None
    if ancestor.returncode != 0:
        raise ReleaseError(f"--good {good} is not an ancestor of --bad {bad}: good is the older commit")
    between = _git(repo, "rev-list", "--first-parent", "--reverse", "--end-of-options",
                   f"{shas['--good']}..{shas['--bad']}").split()
    commits = [shas["--good"], *between]
    if commits[-1] != shas["--bad"]:
        raise ReleaseError(f"--bad {bad} is not on the first-parent line from --good {good}")
    # the requirement keeps the URL's login (uv needs it, and environments take it out of every file they write:
    # runtimes/python.py); what is shown or stored of it is redacted
    return [Build(sha[:12], f"{package} @ git+{url}@{sha}") for sha in commits]

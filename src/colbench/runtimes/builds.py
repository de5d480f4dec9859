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
from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename

from colbench.git import git_command, git_env
from colbench.paths import colbench_home, owned_dir
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
    if package is not None and canonicalize_name(dist) != canonicalize_name(package):
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
    source = source.expanduser().resolve()
    if source.is_dir():
        found = [(info, p) for p in sorted(source.glob("*.whl")) if (info := _wheel(p, package)) is not None]
        if not found:
            raise ReleaseError(f"--wheels {source}: no wheels{f' of {package}' if package else ''} there")
        dists = {canonicalize_name(info[0]) for info, _ in found}
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
        path = Path(entry).expanduser()
        path = (path if path.is_absolute() else source.parent / path).resolve()
        if not path.is_file() or _wheel(path, package) is None:
            raise ReleaseError(f"--wheels {source}, line {number}: {entry} is not a wheel file"
                               f"{f' of {package}' if package else ''}")
        paths.append(path)
    if len(paths) < 2:
        raise ReleaseError(f"--wheels {source}: list at least two wheels, one a line, oldest first")
    dists = {canonicalize_name(str(parse_wheel_filename(p.name)[0])) for p in paths}
    if len(dists) > 1:
        raise ReleaseError(f"--wheels {source}: wheels of {', '.join(sorted(dists))}: list one package's")
    return _labelled(paths)


def wheel_package(builds: Sequence[Build]) -> str:
    return str(parse_wheel_filename(Path(builds[0].requirement).name)[0])


# ------------------------------------------------------------------------------------------------------ git


def _git(repo: Path, *args: str) -> str:
    proc = subprocess.run(git_command("-C", str(repo), *args), capture_output=True, text=True, env=git_env())
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise ReleaseError(redact(f"git {' '.join(args)} in {repo}: {detail[-1] if detail else 'failed'}"))
    return proc.stdout.strip()


def _clone(url: str) -> Path:
    """A blob-less bare clone of `url` under $COLBENCH_HOME/git/ (fetched again when it exists)."""
    root = owned_dir(colbench_home() / "git", "git clones directory")
    target = root / hashlib.sha256(url.encode()).hexdigest()[:16]
    if (target / "HEAD").is_file():
        _git(target, "fetch", "--quiet", "--filter=blob:none", "origin", "+refs/heads/*:refs/heads/*",
             "+refs/tags/*:refs/tags/*")
        return target
    proc = subprocess.run(git_command("clone", "--quiet", "--bare", "--filter=blob:none", url, str(target)),
                          capture_output=True, text=True, env=git_env())
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise ReleaseError(redact(f"--git {url}: cannot clone it ({detail[-1] if detail else 'git failed'})"))
    return target


def _is_url(source: str) -> bool:
    return "://" in source or source.startswith("git@")


def git_builds(source: str, good: str, bad: str, package: str) -> list[Build]:
    """good and every first-parent commit after it up to bad, oldest first, as requirements uv builds."""
    if _is_url(source):
        repo, url = _clone(source), source.removeprefix("git+")
    else:
        path = Path(source).expanduser().resolve()
        if not path.is_dir():
            raise ReleaseError(f"--git {source}: no such directory")
        repo = path
        url = f"file://{path}"
    shas = {}
    for option, ref in (("--good", good), ("--bad", bad)):
        try:
            shas[option] = _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        except ReleaseError:
            raise ReleaseError(redact(f"{option} {ref}: no such commit in {source}")) from None
    if shas["--good"] == shas["--bad"]:
        raise ReleaseError(f"--good and --bad are the same commit ({shas['--good'][:12]}): name two")
    ancestor = subprocess.run(git_command("-C", str(repo), "merge-base", "--is-ancestor", shas["--good"],
                                          shas["--bad"]), capture_output=True, env=git_env())
    if ancestor.returncode != 0:
        raise ReleaseError(f"--good {good} is not an ancestor of --bad {bad}: good is the older commit")
    between = _git(repo, "rev-list", "--first-parent", "--reverse", f"{shas['--good']}..{shas['--bad']}").split()
    commits = [shas["--good"], *between]
    if commits[-1] != shas["--bad"]:
        raise ReleaseError(f"--bad {bad} is not on the first-parent line from --good {good}")
    return [Build(sha[:12], f"{package} @ git+{url}@{sha}") for sha in commits]

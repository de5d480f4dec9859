"""Where a store's profiles live: `$COLBENCH_HOME/profiles/<store key>/`, beside its spool.

    runs/<run id>/<environment>/<case id>/profile.callgrind.gz   `run --profile`: one per case and environment
                                        /perf.map             the names of Python functions (Python 3.12+)
    explain/<A>--<B>/<case id>/…                              `explain`: the profiles it ran, the differential
                                                              flame graph (flamegraph.svg) and explain.json

In colbench's home and not beside the store file, as the spool is (store/spool.py): colbench deletes only in its
own tree, and a store file may be anywhere the user put it. The key is the store's spool key (a hash of the
store file's path or of the server's address, never of a password), so every store has its own profiles.
Every folder is made through `paths.owned_dir` and every deletion goes through `paths.remove`; names in the
layout come from the store (run ids, environment names, case ids) and are checked to be plain names.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colbench.paths import NAME_PATTERN, check_name, colbench_home, owned, remove
from colbench.store.spool import store_key

PROFILE_FILE = "profile.callgrind.gz"
PERF_MAP_FILE = "perf.map"
#: `run --profile-memory`: heaptrack's file of the timed call and the worker's figures (runner/memory_profile.py),
#: in a `memory/` folder of the case's own
MEMORY_FOLDER = "memory"
MEMORY_PROFILE_FILES = ("profile.heaptrack.zst", "profile.heaptrack.gz")


@dataclass(frozen=True)
class StoredProfile:
    run_id: str
    env_name: str
    case_id: str
    path: Path
    perf_map: Path | None
    size_bytes: int


def profiles_root(store: Any) -> Path:
    spool = getattr(store, "spool", None)
    key = spool.dir.name if spool is not None else store_key(str(store.url))
    return colbench_home() / "profiles" / key


def run_folder(store: Any, run_id: str) -> Path:
    return profiles_root(store) / "runs" / check_name(run_id, "run id")


def case_folder(store: Any, run_id: str, env_name: str, case_id: str) -> Path:
    return run_folder(store, run_id) / check_name(env_name, "environment") / check_name(case_id, "case id")


def explain_folder(store: Any, baseline: str, contender: str) -> Path:
    """`baseline`/`contender`: `RUN.ENV` of each side (checked names)."""
    return profiles_root(store) / "explain" / f"{check_name(baseline, 'side')}--{check_name(contender, 'side')}"


def stored_profile(store: Any, run_id: str, env_name: str, case_id: str) -> StoredProfile | None:
    folder = case_folder(store, run_id, env_name, case_id)
    path = folder / PROFILE_FILE
    if not path.is_file():
        return None
    perf_map = folder / PERF_MAP_FILE
    return StoredProfile(run_id, env_name, case_id, path, perf_map if perf_map.is_file() else None,
                         path.stat().st_size)


def memory_folder(store: Any, run_id: str, env_name: str, case_id: str) -> Path:
    return case_folder(store, run_id, env_name, case_id) / MEMORY_FOLDER


def stored_memory_profile(store: Any, run_id: str, env_name: str, case_id: str) -> Path | None:
    """The memory profile `run --profile-memory` kept for the case and environment, or None."""
    folder = memory_folder(store, run_id, env_name, case_id)
    return next((folder / name for name in MEMORY_PROFILE_FILES if (folder / name).is_file()), None)


def run_profiles(store: Any, run_id: str) -> list[StoredProfile]:
    """Every profile `run --profile` kept for a run (none when it kept none)."""
    folder = run_folder(store, run_id)
    if not folder.is_dir():
        return []
    found = []
    for env_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
        for case_dir in sorted(p for p in env_dir.iterdir() if p.is_dir()):
            profile = stored_profile(store, run_id, env_dir.name, case_dir.name)
            if profile is not None:
                found.append(profile)
    return found


def explain_root(store: Any) -> Path:
    return profiles_root(store) / "explain"


def run_explain_folders(store: Any, run_id: str) -> list[Path]:
    """The `explain` folders with the run on either side (`<run>.<env>--…` or `…--<run>.<env>`); a symlink in that
    place is listed too (as the entry, never followed)."""
    if not NAME_PATTERN.fullmatch(run_id):
        return []  # no folder was ever made for a run id that is not a plain name
    root = explain_root(store)
    if root.is_symlink() or not root.is_dir():
        return []
    return sorted(p for p in root.iterdir()
                  if p.name.startswith(f"{run_id}.") or f"--{run_id}." in p.name)


@dataclass(frozen=True)
class KeptFiles:
    """What of a run the profiles folder holds: the folders (the run's own, then its explain folders), the regular
    files in them and their bytes, and which of the folders are symlinks (removing one removes only the link)."""

    folders: tuple[Path, ...]
    files: int
    size_bytes: int
    links: tuple[Path, ...]


def run_kept_files(store: Any, run_id: str) -> KeptFiles:
    """Every file colbench keeps for a run under the profiles folder, counted without following a symlink."""
    if not NAME_PATTERN.fullmatch(run_id):
        return KeptFiles((), 0, 0, ())  # no folder was ever made for a run id that is not a plain name
    own = run_folder(store, run_id)
    folders = ([own] if own.is_symlink() or own.exists() else []) + run_explain_folders(store, run_id)
    files = size = 0
    links = []
    for folder in folders:
        if folder.is_symlink():
            links.append(folder)
            continue
        if not folder.is_dir():
            files, size = files + 1, size + folder.lstat().st_size
            continue
        for parent, _dirs, names in os.walk(folder):  # os.walk does not descend into linked directories
            for name in names:
                st = os.lstat(os.path.join(parent, name))
                if stat.S_ISREG(st.st_mode):
                    files, size = files + 1, size + st.st_size
    return KeptFiles(tuple(folders), files, size, tuple(links))


def check_removable(store: Any) -> None:
    """UnsafePath unless the folders a run's files are deleted from lie in colbench's own tree (a symlink planted
    on the way out of $COLBENCH_HOME is refused, never followed): checked before anything of a run is deleted."""
    for folder in (profiles_root(store) / "runs", explain_root(store)):
        if folder.exists() or folder.is_symlink():
            owned(folder, "profiles directory")


def check_writable(store: Any) -> None:
    """UnsafePath unless the store's profiles folder (`profiles/<key>/runs`) is colbench's at every level: checked
    before a `run --profile` starts, so a link planted there is one line, not a warning per case."""
    owned(profiles_root(store) / "runs", "profiles directory")


def remove_run_profiles(store: Any, run_id: str) -> int:
    """Delete a run's profiles and the explain folders that name it (when the run is deleted); returns the bytes
    freed. A symlink in place of a folder is removed itself, never what it points to."""
    if not NAME_PATTERN.fullmatch(run_id):
        return 0
    freed = 0
    folder = run_folder(store, run_id)
    if folder.exists() or folder.is_symlink():
        freed += remove(folder, within=folder.parent)
    for explained in run_explain_folders(store, run_id):
        freed += remove(explained, within=explain_root(store))
    return freed

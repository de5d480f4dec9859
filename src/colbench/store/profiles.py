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

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colbench.paths import check_name, colbench_home, remove
from colbench.store.spool import store_key

PROFILE_FILE = "profile.callgrind.gz"
PERF_MAP_FILE = "perf.map"


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


def remove_run_profiles(store: Any, run_id: str) -> int:
    """Delete a run's profiles (when the run is deleted); returns the bytes freed."""
    folder = run_folder(store, run_id)
    if not folder.exists():
        return 0
    return remove(folder, within=folder.parent)

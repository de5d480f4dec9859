"""A run's environments on a cluster's workers: each worker builds (or finds in its own cache) every environment its
tasks need from the lock the client resolved, so all workers install the very versions the client chose.

The client turns each `EnvChoice` into an `EnvTicket`: its uv environment's lock (`requirements.lock`, every
distribution pinned), the exact Python it runs on and whether it is worker-only. A worker builds the ticket with the
ordinary builder (`runtimes.python.ensure_environment`) from the lock's pins, in its own `COLBENCH_HOME`; it says which
worker built it, whether it was in that worker's cache, and the SHA-256 of the lock it resolved, which must equal the
client's: a worker that resolves anything else refuses the environment (its executions are error results with the
reason), and so does one that cannot build it at all (a local wheel it does not have, a Python it lacks).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import threading
import time
from dataclasses import dataclass

from colbench.model.run_config import EnvChoice
from colbench.paths import envs_dir
from colbench.redact import redact
from colbench.runtimes.env_cache import LOCK_FILE, MARKER, list_environments
from colbench.runtimes.python import EnvError, EnvSpec, colbench_project, ensure_environment


@dataclass(frozen=True)
class EnvTicket:
    """What a worker needs to build a run's environment as the client did. `lock` None: no uv environment (this
    colbench's own interpreter, `@current`, a Java or R worker's pins): the worker uses its own."""

    env: EnvChoice
    lock: str | None = None
    python_version: str = ""
    worker_only: bool = False

    @property
    def lock_sha256(self) -> str | None:
        return lock_hash(self.lock) if self.lock is not None else None


@dataclass(frozen=True)
class EnvOnWorker:
    """An environment ready on a worker: the worker's own `EnvChoice` (its interpreter's path) and how it got there."""

    env: EnvChoice
    key: str | None
    lock_sha256: str | None
    built: bool
    seconds: float
    error: str = ""


def lock_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def ticket_for(env: EnvChoice) -> EnvTicket:
    """The client's ticket of one of its environments (read from its cache: the lock and marker it built)."""
    if env.runtime != "python" or not env.key or env.broken:
        return EnvTicket(env)
    folder = envs_dir() / env.key
    try:
        lock = (folder / LOCK_FILE).read_text()
        meta = json.loads((folder / MARKER).read_text())
    except (OSError, ValueError):
        return EnvTicket(env)  # built by an older colbench without a lock: the worker resolves the spec itself
    return EnvTicket(env, lock, str(meta.get("python_version") or ""), bool(meta.get("worker_only")))


def lock_requirements(lock: str) -> tuple[str, ...]:
    """The pins of a lock (`name==version`, `name @ url`), without comments, options and blank lines."""
    lines = (line.split(" #", 1)[0].strip() for line in lock.splitlines())
    return tuple(line for line in lines if line and not line.startswith(("#", "-")))


_READY: dict[str, EnvOnWorker] = {}
_GUARD = threading.Lock()


def env_on_worker(ticket: EnvTicket) -> EnvOnWorker:
    """The ticket's environment on this worker, built once per worker process (and cached on its disk as every uv
    environment is); an `error` says why it could not be."""
    cache_key = ticket.lock_sha256 or f"{ticket.env.name}|{ticket.env.runtime}|{ticket.env.key}"
    with _GUARD:
        first = cache_key not in _READY
        if first:
            _READY[cache_key] = _build(ticket)
        ready = _READY[cache_key]
    if not first:  # built (or found) for an earlier task of this worker process: nothing was done for this one
        ready = dataclasses.replace(ready, built=False, seconds=0.0)
    # the same lock may serve two names (a sweep's release and an --env of it): the name is the ticket's
    return dataclasses.replace(ready, env=dataclasses.replace(ready.env, name=ticket.env.name,
                                                              variables=dict(ticket.env.variables)))


def _same_as_clients(ticket: EnvTicket) -> EnvOnWorker | None:
    """The client's own environment, when this worker's home has it under the client's key with the same lock (a
    worker that shares the client's home, `--cluster local:N`, or one that built it before under that key)."""
    for found in list_environments():
        if found.key == ticket.env.key:
            try:
                same = lock_hash(found.lock_file.read_text()) == ticket.lock_sha256
            except OSError:
                return None
            if not same:
                return None
            env = dataclasses.replace(ticket.env, python=str(found.python), resolved=dict(found.resolved))
            return EnvOnWorker(env, found.key, ticket.lock_sha256, built=False, seconds=0.0)
    return None


def _build(ticket: EnvTicket) -> EnvOnWorker:
    env = ticket.env
    if ticket.lock is None:
        own = dataclasses.replace(env, python=sys.executable) if env.runtime == "python" and not env.key else env
        return EnvOnWorker(own, env.key, None, built=False, seconds=0.0)
    same = _same_as_clients(ticket)
    if same is not None:
        return same
    started = time.monotonic()
    said: list[str] = []
    spec = EnvSpec(env.name, lock_requirements(ticket.lock), python=ticket.python_version or None,
                   worker_only=ticket.worker_only, wheels_only=ticket.worker_only)
    try:
        # under the client's key: the record's env_key and this worker's cache name the client's environment
        built = ensure_environment(spec, colbench_project(), say=said.append, key=ticket.env.key)
        resolved = built.lock_file.read_text()
    except (EnvError, OSError) as exc:
        return EnvOnWorker(env, None, ticket.lock_sha256, built=False, seconds=time.monotonic() - started,
                           error=f"does not build on this worker: {redact(str(exc)).splitlines()[0][:300]}")
    seconds = time.monotonic() - started
    fresh = any(" built in " in line for line in said)
    mine = lock_hash(resolved)
    if mine != ticket.lock_sha256:
        return EnvOnWorker(env, built.key, mine, fresh, seconds,
                           error=f"resolves to another lock on this worker ({mine[:12]}, the client's "
                                 f"{(ticket.lock_sha256 or '')[:12]}): its versions would not be the ones chosen")
    own = dataclasses.replace(env, python=str(built.python), key=built.key, resolved=dict(built.resolved))
    return EnvOnWorker(own, built.key, mine, fresh, seconds)

"""Tasks no worker is left to run: the client hears from the scheduler when a worker leaves (its `remove-worker`
event, pushed to the client: nothing is polled, and the workers are never asked), and when a task submitted to the
cluster may run only on workers that have all left (a CPU kind's workers in a split counting run, the one worker
of a wall-time case's earlier blocks) or the cluster has no worker at all, it waits a grace for one to come back
(the scheduler keeps such a task in its `no-worker` state forever). After the grace the task is cancelled and its
executions end as not run, with the cause: the rest of the run goes on, and `run --resume` runs them later.

The grace is Dask's own `distributed.scheduler.no-workers-timeout` when the client's Dask config sets it (e.g.
`DASK_DISTRIBUTED__SCHEDULER__NO_WORKERS_TIMEOUT=30s`), else `GRACE_S`: a worker restarted by its nanny at a fixed
`--worker-port`, or one that reconnects, has its old address back and takes the task again within it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

#: how the cause of an execution that was not run (and may run later: `run --resume`) begins
NOT_RUN = "not run: "
#: seconds a task waits for a worker it may run on to come back, unless Dask's config says otherwise
GRACE_S = 60.0
#: what the scheduler raises for a task it gave up on itself (its own no-workers-timeout, set on the scheduler)
DASKS_OWN = ("NoValidWorkerError", "NoWorkerError")


def grace_s() -> float:
    """Dask's `distributed.scheduler.no-workers-timeout` when set (on the client), else `GRACE_S`."""
    import dask
    from dask.utils import parse_timedelta

    value = dask.config.get("distributed.scheduler.no-workers-timeout", None)
    seconds = parse_timedelta(value) if value not in (None, "", False) else None
    return float(seconds) if seconds is not None else GRACE_S


@dataclass(frozen=True)
class Placement:
    """Where a submitted task may run: worker addresses (None: any worker), and the words for them ("workers of CPU
    kind X", "worker w2") in the cause of a task none of them is left to run."""

    addresses: frozenset[str] | None
    where: str


class OrphanWatch:
    """Watches the cluster's workers while a pass's tasks are out: `cancel_orphans(keys)` hears (on a timer thread)
    the keys of tasks no worker may run any more, after the grace; `cause(key)` says why."""

    def __init__(self, client: Any, grace: float, cancel: Callable[[list[str]], None], advice: str) -> None:
        self.client = client
        self.grace = grace
        self.cancel = cancel
        self.advice = advice
        self._lock = threading.Lock()
        self._pending: dict[str, Placement] = {}
        self._present: set[str] = set()
        self._causes: dict[str, str] = {}
        self._timers: list[threading.Timer] = []

    def start(self, placements: dict[str, Placement]) -> None:
        self._pending = dict(placements)
        # subscribed first, then the workers read: one that leaves in between is in neither, which `_orphans` sees
        self.client.subscribe_topic("all", self._heard)
        present = set(self.client.scheduler_info().get("workers", {}))
        with self._lock:
            self._present = present
        self._arm()

    def stop(self) -> None:
        with contextlib.suppress(Exception):  # a client already closed has nothing subscribed
            self.client.unsubscribe_topic("all")
        with self._lock:
            timers, self._timers = self._timers, []
        for timer in timers:
            timer.cancel()

    def done(self, key: str) -> None:
        with self._lock:
            self._pending.pop(key, None)

    def cause(self, key: str) -> str | None:
        with self._lock:
            return self._causes.get(key)

    def _heard(self, event: tuple[float, dict[str, Any]]) -> None:
        """A scheduler event (on the client's event loop: quick, never blocking)."""
        msg = event[1] if isinstance(event, tuple) and len(event) == 2 else None
        if not isinstance(msg, dict) or not msg.get("worker"):
            return
        action, worker = msg.get("action"), str(msg["worker"])
        with self._lock:
            if action == "add-worker":
                self._present.add(worker)
            elif action == "remove-worker":
                self._present.discard(worker)
        if action == "remove-worker":
            self._arm()

    def _orphans(self) -> list[str]:
        with self._lock:
            return [key for key, placed in self._pending.items() if not _runnable(placed, self._present)]

    def _arm(self) -> None:
        """A timer of `grace` seconds when some task has no worker left it may run on (none otherwise)."""
        if not self._orphans():
            return
        timer = threading.Timer(self.grace, self._expire)
        timer.daemon = True
        with self._lock:
            self._timers.append(timer)
        timer.start()

    def _expire(self) -> None:
        with self._lock:
            orphans = [key for key, placed in self._pending.items() if not _runnable(placed, self._present)]
            if not orphans:
                return
            for key in orphans:
                where = self._pending.pop(key).where  # cancelled once, whichever timer sees it first
                self._causes[key] = (f"{NOT_RUN}no {where} left in the cluster (none came back within "
                                     f"{self.grace:g} s); {self.advice}")
        self.cancel(orphans)


def _runnable(placed: Placement, present: Iterable[str]) -> bool:
    workers = set(present)
    return bool(workers) if placed.addresses is None else bool(placed.addresses & workers)

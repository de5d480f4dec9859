"""Which process is running a run, and whether it still is.

A run record says `status: running` while a `colbench` process measures it, and also after that process was
killed with -9 (nothing could mark it interrupted). To tell the two apart, the process that runs a run stamps the
record with `process`: `{"host", "pid", "started"}` (the host name, its pid, and the pid's start time, so a pid
the kernel gave to another process since is not mistaken for it). A run is *going on* when it is marked running
and its stamp names a live process on this host; a stamp of another host cannot be checked from here, and a
record without a stamp (written by an older colbench) cannot be checked at all: both count as going on, and the
command that would change the run asks for `--force`.
"""

from __future__ import annotations

import os
import socket
from datetime import datetime

import psutil

from colbench.model.records import Run, RunProcess
from colbench.model.watch import WatchHolder

#: how far a live pid's start time may differ from the stamp's (psutil rounds it from clock ticks)
_START_SLACK_S = 1.0


def process_stamp() -> RunProcess:
    """The `process` field of a run this process runs."""
    return RunProcess(host=socket.gethostname(), pid=os.getpid(), started=psutil.Process().create_time())


def going_on(run: Run) -> str | None:
    """Why the run must be taken to be going on in a process (a clause for the user), or None when it is not:
    finished, interrupted, or marked running by a process of this host that has ended."""
    if run.status != "running":
        return None
    stamp = run.process
    if not isinstance(stamp, dict) or not isinstance(stamp.get("pid"), int):
        return "it is marked running and its record does not say which process runs it (an older colbench)"
    host, pid = stamp.get("host"), stamp["pid"]
    if host != socket.gethostname():
        return f"it is marked running on host {host!r}, whose processes colbench cannot see from here"
    try:
        started = psutil.Process(pid).create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess, ValueError):
        return None  # the process is gone: killed, the record left behind
    except psutil.AccessDenied:
        return f"it is running in process {pid} on this host"
    recorded = stamp.get("started")
    if isinstance(recorded, int | float) and abs(started - recorded) > _START_SLACK_S:
        return None  # the pid now belongs to another process
    return f"it is running in process {pid} on this host"


def holder_stamp() -> WatchHolder:
    """Who runs a pass of a watch: this process (the `holder` of `Store.claim_watch`)."""
    stamp = process_stamp()
    return WatchHolder(host=stamp["host"], pid=stamp["pid"], started=stamp["started"])


def _gone(holder: WatchHolder) -> bool:
    """Whether a holder of this host has ended (its pid is gone, or belongs to another process now)."""
    if holder.get("host") != socket.gethostname():
        return False
    try:
        started = psutil.Process(int(holder["pid"])).create_time()
    except (psutil.NoSuchProcess, psutil.ZombieProcess, ValueError, KeyError, TypeError):
        return True
    except psutil.AccessDenied:
        return False
    recorded = holder.get("started")
    return isinstance(recorded, int | float) and bool(abs(started - recorded) > _START_SLACK_S)


def may_claim(current: WatchHolder | None, expires_at: datetime | None, me: WatchHolder, now: datetime) -> bool:
    """Whether `me` may take a watch that `current` holds until `expires_at`: nobody holds it, it is mine already,
    the lease ended (a holder of another host that stopped without a word), or its holder, on this host, is gone
    (killed with -9)."""
    if current is None or (current.get("host"), current.get("pid"), current.get("started")) == (
            me["host"], me["pid"], me["started"]):
        return True
    if expires_at is not None and expires_at <= now:
        return True
    return _gone(current)

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

import psutil

from colbench.model.records import Run, RunProcess

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

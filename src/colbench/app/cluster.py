"""`--cluster ADDRESS` (or `COLBENCH_CLUSTER`) on `run`, `bisect` and `watch`: the runs a use case starts go to a Dask
cluster (runner/cluster.py) instead of this machine's local runner; without it nothing changes.

ADDRESS is a Dask scheduler's (`tcp://host:8786`, started with `dask scheduler`, its workers with
`dask worker tcp://host:8786 --nthreads 1`), or `local:N`: a cluster of N worker processes started here, on
127.0.0.1 only, for trying it (docs/scale.md). Dask is an optional extra: `pip install 'colbench[cluster]'`.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from typing import Any

from colbench.app.errors import UsageError
from colbench.redact import redact

CLUSTER_ENV = "COLBENCH_CLUSTER"
#: how long to wait for a scheduler (and, for `local:N`, its workers) before saying it is not there
CONNECT_TIMEOUT_S = 30


def cluster_address(given: str | None) -> str | None:
    """The cluster asked for: `--cluster`, else `COLBENCH_CLUSTER` (None: the local runner)."""
    address = (given if given is not None else os.environ.get(CLUSTER_ENV, "")).strip()
    return address or None


def _local_workers(address: str) -> int | None:
    match = re.fullmatch(r"local:(\d{1,3})", address)
    if address.startswith("local") and not match:
        raise UsageError(f"--cluster {address!r}: give local:N, N worker processes here (e.g. local:2)")
    if match and not 1 <= int(match.group(1)) <= 256:
        raise UsageError(f"--cluster {address}: between 1 and 256 local workers")
    return int(match.group(1)) if match else None


def _dask() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError("--cluster needs Dask's distributed, an optional extra: `pip install 'colbench[cluster]'` "
                         "(in a checkout: `uv sync --extra cluster`)") from None
    return distributed


@contextlib.contextmanager
def cluster_session(given: str | None, say: Callable[[str], None] = lambda _: None) -> Iterator[str | None]:
    """Inside the block every run goes to the cluster `given` (or `COLBENCH_CLUSTER`); yields what it is ("dask
    tcp://…", None without a cluster). `local:N` starts N worker processes on 127.0.0.1 and stops them after."""
    address = cluster_address(given)
    if address is None:
        yield None
        return
    workers = _local_workers(address)
    distributed = _dask()
    from colbench.runner.cluster import DaskExecutor
    from colbench.runner.executor import using_executor

    with contextlib.ExitStack() as stack:
        target: Any = address
        if workers is not None:
            say(f"cluster: starting {workers} local worker process{'es' if workers != 1 else ''} on 127.0.0.1")
            target = stack.enter_context(_local_cluster(distributed, workers))
        client = stack.enter_context(_connect(distributed, target, address))
        label = client.scheduler.address if workers is not None else redact(address)
        executor = DaskExecutor(client, label, say)
        say(f"cluster: {executor.label}, {len(client.scheduler_info().get('workers', {}))} workers")
        with using_executor(executor):
            yield executor.label


def _local_cluster(distributed: Any, workers: int) -> Any:
    """N one-thread worker processes on 127.0.0.1, whose scheduler hands a worker its next task only when it is free
    (worker-saturation 1.0, not Dask's 1.1, which queues a second task on each one-thread worker: at the end of a run
    of long tasks one worker can idle while the other runs its last two), and whose pollers are quiet while a task
    waits on its measured process (QUIET_WORKER: the workers take the config they are started with)."""
    import dask

    from colbench.runner.cluster import QUIET_WORKER, SATURATION_KEY

    with dask.config.set({SATURATION_KEY: 1.0, **QUIET_WORKER}):
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                        dashboard_address=None, silence_logs=40)


def _connect(distributed: Any, target: Any, address: str) -> Any:
    try:
        return distributed.Client(target, timeout=f"{CONNECT_TIMEOUT_S}s", set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise UsageError(f"--cluster {redact(address)}: no Dask scheduler answered there ({type(exc).__name__}); "
                         "start one with `dask scheduler` and workers with `dask worker ADDRESS --nthreads 1`, or "
                         "try `--cluster local:2`") from None

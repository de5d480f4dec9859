"""What a Dask worker runs for colbench (`runner/cluster.py` submits it): a task of one or more executions, each in a
fresh worker process on this machine exactly as the local runner starts it (`execute.execute_one`), in environments
built here from the client's locks (`cluster_env.py`), on input files prepared here. The results go back to the
client, which alone writes the store; each records this worker's machine, which worker it was and the environment
it ran in here.

A task of several executions (every block of every side of one wall-time case) runs them one after another on this
one worker, so each of that case's verdicts comes from one machine.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from colbench.machine.facts import checks_as_json, environment_checks, machine_info
from colbench.model.records import ExecutorInfo, Result, Run
from colbench.model.run_config import RunConfig
from colbench.runner.cluster_env import EnvTicket, env_on_worker
from colbench.runner.execute import counting_toolchain, execute_one, prepare_inputs
from colbench.runner.plan import Execution


@dataclass(frozen=True)
class Task:
    """One Dask task: executions of one case run in order on one worker, and what they share."""

    run: Run
    config: RunConfig
    iterations: int
    warmup: int
    executions: tuple[Execution, ...]
    #: environment name → how to build it here
    tickets: dict[str, EnvTicket]


@dataclass(frozen=True)
class WorkerFacts:
    """What decides whether two workers count alike: the CPU's model, architecture and feature flags."""

    address: str
    name: str
    host: str
    machine_id: str
    cpu_model: str
    architecture: str
    flags_sha256: str
    #: the worker's administrator's name for its kind (`COLBENCH_WORKER_CPU_KIND`), '' when read from the CPU
    label: str = ""

    @property
    def kind(self) -> str:
        """One CPU kind: instruction counts are comparable between workers of one kind (the code paths a library
        takes depend on the CPU's features: AVX2 or not, …)."""
        if self.label:
            return self.label
        return f"{self.cpu_model} ({self.architecture}, flags {self.flags_sha256[:8]})"


#: set on a worker (`COLBENCH_WORKER_CPU_KIND=… dask worker …`), its CPU kind is this name instead of the one read
#: from its CPU: for machines that read alike but count apart (a microcode, a hypervisor's masked features), or to
#: try the refusal and the split on one machine
KIND_ENV = "COLBENCH_WORKER_CPU_KIND"


def _cpu_flags() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""
    flags = next((line.split(":", 1)[1] for line in text.splitlines() if line.startswith(("flags", "Features"))), "")
    return " ".join(sorted(flags.split()))


def _this_worker() -> tuple[str, str]:
    """(address, name) of the Dask worker running this task ('', '' outside one)."""
    try:
        from distributed import get_worker

        worker = get_worker()
    except (ImportError, ValueError):
        return "", ""
    return str(worker.address), str(worker.name)


@functools.cache
def _machine() -> tuple[Any, Any]:
    info = machine_info()
    return info, checks_as_json(environment_checks(info))


def worker_facts(dask_worker: Any = None) -> WorkerFacts:
    """This worker's identity and CPU kind (the client asks every worker with `Client.run`, which passes the worker
    as `dask_worker`: that is no task, so `get_worker()` does not know it there)."""
    info, _ = _machine()
    address, name = (str(dask_worker.address), str(dask_worker.name)) if dask_worker is not None else _this_worker()
    return WorkerFacts(address, name, socket.gethostname(), info["machine_id"], info["cpu_model"],
                       info["architecture"], hashlib.sha256(_cpu_flags().encode()).hexdigest(),
                       os.environ.get(KIND_ENV, "").strip()[:200])


@functools.cache
def _toolchain(counting: bool, profile: bool) -> Any:
    return counting_toolchain(RunConfig(targets=[], measure=("instructions",) if counting else ("wall",),
                                        profile=profile))


@functools.cache
def _kind() -> str:
    return worker_facts().kind


def run_task(task: Task) -> list[Result]:
    """Run the task's executions here, in order; every result says where it ran. Never raises for a failing case:
    that is an error result, as on the local runner."""
    info, checks = _machine()
    run = dataclasses.replace(task.run, machine_id=info["machine_id"], machine=info, checks=checks)
    toolchain = _toolchain("instructions" in task.config.measure, False)
    inputs = prepare_inputs([task.executions[0].case])[task.executions[0].case.case_id]
    address, name = _this_worker()
    results = []
    for execution in task.executions:
        ticket = task.tickets[execution.env.name]
        ready = env_on_worker(ticket)
        env = ready.env if not ready.error else dataclasses.replace(ticket.env, broken=ready.error)
        result = execute_one(run, dataclasses.replace(execution, env=env), inputs, task.iterations, task.warmup,
                             task.config, toolchain)
        result.process["executor"] = ExecutorInfo(
            kind="dask", worker=name, address=address, host=socket.gethostname(), env_key=ready.key,
            client_env_key=ticket.env.key, lock_sha256=ready.lock_sha256, env_built=ready.built,
            env_seconds=round(ready.seconds, 1), group=len(task.executions), cpu_kind=_kind())
        results.append(result)
    return results

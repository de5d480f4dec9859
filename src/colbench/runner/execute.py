"""The run loop: prepare inputs, schedule executions, isolate each in a worker, store each result at once."""

from __future__ import annotations

import json
import logging
import os
import random
import secrets
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import psutil

import colbench
from colbench.git import run_git
from colbench.machine.facts import checks_as_json, environment_checks, machine_info
from colbench.model.benchmark import int_param
from colbench.model.records import CaseSpec, CommitInfo, InputFile, Result, Run, WorkerReport
from colbench.model.run_config import EnvChoice, RunConfig
from colbench.redact import redact
from colbench.runner.bytecode import cache_own_bytecode
from colbench.runner.collect import build_result, invalid_number
from colbench.runner.executor import Executor, Job, Started, current_executor
from colbench.runner.interrupt import Interrupted, StopSignals, signal_name, stop_on_signals
from colbench.runner.isolate import (
    DEFAULT_ENV,
    WorkerLaunch,
    WorkerOutcome,
    run_worker,
    thread_env,
    worker_cpus,
)
from colbench.runner.lifeline import sweep_stale_exec_dirs
from colbench.runner.local_jobs import local_jobs
from colbench.runner.observer import ExecutionHooks
from colbench.runner.plan import Execution, Plan, PlanError, PlannedCase
from colbench.runtimes import RuntimeUnavailable, get_runtime
from colbench.store.base import Store, StoreError
from colbench.store.run_owner import process_stamp

log = logging.getLogger("colbench.runner")


def new_run_id() -> str:
    """Sortable by time, unique enough for many machines writing to one store."""
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)


def git_commit(repo: str | Path) -> CommitInfo:
    """The commit of the project under test, and whether its work tree had changes."""
    def git(*args: str) -> str:
        done = run_git("-C", str(repo), *args, timeout_s=60, what=f"git {args[0]}")
        done.check_returncode()
        return done.stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain"))
        when = git("log", "-1", "--format=%cI")
    except (OSError, subprocess.SubprocessError) as exc:
        raise PlanError(f"cannot read a git commit from {repo}: {exc}") from None
    return {"sha": sha, "repository": str(Path(repo).resolve()), "dirty": dirty, "timestamp": when}


def schedule(cases: Sequence[PlannedCase], envs: Sequence[EnvChoice], processes: Callable[[PlannedCase], int],
             seed: int) -> list[Execution]:
    """All processes of a case run back to back; across environments they interleave in randomized blocks
    (A B, B A, …), so drift during a case hits every environment alike. `processes`: a case's count
    (`RunConfig.processes_of`)."""
    rng = random.Random(seed)
    plan: list[Execution] = []
    for case in cases:
        for block in range(processes(case)):
            order = list(envs)
            rng.shuffle(order)
            plan.extend(Execution(case, env, block, block) for env in order)
    return plan


def worker_command(runtime: str, env: EnvChoice) -> list[str]:
    """How a worker of `runtime` starts in `env`; a Java or R environment's pins (e.g. {"arrow": "18.1.0"}) choose
    the worker build for cases of its own runtime."""
    try:
        return get_runtime(runtime).worker_command(env.python, env.resolved if env.runtime == runtime else {})
    except RuntimeUnavailable as exc:
        raise PlanError(str(exc)) from None


def prepare_inputs(cases: Sequence[PlannedCase]) -> dict[str, dict[str, InputFile]]:
    """Materialise every input file once (generate, download or reuse); returns case_id → input docs."""
    prepared: dict[str, dict[str, InputFile]] = {}
    if not any(case.inputs for case in cases):
        return {case.case_id: {} for case in cases}
    from colbench.data.cache import materialize
    from colbench.data.errors import DataError

    memo: dict[str, InputFile] = {}
    for case in cases:
        docs: dict[str, InputFile] = {}
        for name, request in case.inputs.items():
            key = json.dumps(request.to_json(), sort_keys=True)
            if key not in memo:
                try:
                    cached = materialize(request)
                except DataError as exc:
                    raise PlanError(str(exc)) from None
                memo[key] = cached.case_input(request.to_json())
            docs[name] = memo[key]
        prepared[case.case_id] = docs
    return prepared


def case_spec(case: PlannedCase, inputs: dict[str, InputFile], iterations: int, warmup: int, seed: int) -> CaseSpec:
    params = case.params
    return CaseSpec(benchmark=case.benchmark.name, case_id=case.case_id, params=params, inputs=inputs,
                    iterations=iterations, warmup=warmup, threads=int_param(params, "threads"),
                    allocator=str(params.get("allocator", "default")), cache=str(params.get("cache", "warm")),
                    seed=seed, source=case.benchmark.source_spec())


def launch_for(case: PlannedCase, env: EnvChoice, config: RunConfig) -> tuple[WorkerLaunch, str | None]:
    threads = int_param(case.params, "threads")
    cpus, warning, quietest = worker_cpus(threads)
    child_env = {**DEFAULT_ENV, **os.environ, **env.variables, **thread_env(threads)}
    allocator = str(case.params.get("allocator", "default"))
    if allocator != "default":
        child_env["ARROW_DEFAULT_MEMORY_POOL"] = allocator
    else:
        child_env.pop("ARROW_DEFAULT_MEMORY_POOL", None)
    limit = config.memory_limit_bytes or int(psutil.virtual_memory().total * 0.8)
    return WorkerLaunch(command=worker_command(case.runtime, env), env=child_env, cpus=cpus,
                        timeout_s=_timeout_s(case, config), memory_limit_bytes=limit, quietest=quietest), warning


def _timeout_s(case: PlannedCase, config: RunConfig) -> float:
    """The run's timeout, or a shorter one the benchmark sets itself (asv's `timeout`, for the whole process)."""
    own = getattr(case.benchmark, "timeout_s", lambda: None)()
    return min(config.timeout_s, float(own)) if own else config.timeout_s


def start_run(store: Store, config: RunConfig, plan: Plan, envs: Sequence[EnvChoice], argv: list[str],
              observer: ExecutionHooks | None = None) -> Run:
    # where its profiles go: a folder there linked out of the home is refused before the run starts
    if config.profile or config.profile_memory:
        from colbench.profiles.stored import check_writable

        check_writable(store)
    iterations, warmup, processes = config.resolved(plan)
    observer = observer or ExecutionHooks()
    observer.preparing("describing the machine (its checks)")
    info = machine_info(config.machine_name)
    memcpy_threads = [int_param(c.params, "threads") for c in plan.cases if "memcpy" in c.benchmark.calibrations]
    calibration = None
    if memcpy_threads:
        from colbench.machine.bandwidth import measure

        observer.preparing("measuring the machine's memory bandwidth (what E3's cases are read against)")
        calibration = measure(memcpy_threads)
    run = Run(
        run_id=new_run_id(),
        name=config.run_name,
        started_at=datetime.now(UTC).isoformat(),
        status="running",
        process=process_stamp(),  # which process runs it: `delete` refuses a run that is going on
        argv=argv,
        colbench_version=colbench.__version__,
        machine_id=info["machine_id"],
        machine=info,
        checks=checks_as_json(environment_checks(info)),
        commit=config.commit,
        # the counts resolved and the suite named, as the run is measured; the machine's name is `machine` now
        config=replace(config, iterations=iterations, warmup=warmup, processes=processes,
                       suite=plan.suite.name if plan.suite else None, machine_name=None),
        envs=[replace(e) for e in envs],
        cases=len(plan.cases),
        calibration=calibration,
    )
    # argv is recorded whole, and --store/--commit/--env may carry a password or a token: the record never does
    run = run.redacted()
    store.create_run(run)
    return run


def config_from_run(run: Run) -> RunConfig:
    """The config a stored run is continued with (`run --resume`, a session's next look): its own, a copy."""
    return replace(run.config, targets=list(run.config.targets), overrides=dict(run.config.overrides),
                   run_name=run.name, commit=run.commit)


class _CaseCounts:
    """What is left of each case in one pass of the run loop, so that a case is said done after its last execution;
    with `stop_failing`, a case that failed in an environment has its other executions there left out (a bisect's
    point that cannot read the file fails every process the same way: more are minutes of Valgrind for nothing)."""

    def __init__(self, executions: Sequence[Execution], stop_failing: bool) -> None:
        self.left = Counter(e.case.case_id for e in executions)
        self.pending = Counter(self._side(e) for e in executions)
        self.stop_failing = stop_failing
        self.failing: set[tuple[str, str]] = set()
        self.cases = len(self.left)

    @staticmethod
    def _side(execution: Execution) -> tuple[str, str]:
        return execution.case.case_id, execution.env.name

    def skipped(self, execution: Execution) -> bool:
        return self._side(execution) in self.failing

    def case_done(self, execution: Execution, result: Result) -> bool:
        """Count `execution` done; True when it was its case's last."""
        side = self._side(execution)
        self.pending[side] -= 1
        self.left[side[0]] -= 1
        if self.stop_failing and not result.ok and side not in self.failing:
            self.failing.add(side)  # its other executions there count as done
            self.left[side[0]] -= self.pending[side]
        return not self.left[side[0]]


def execute_run(store: Store, run: Run, plan: Plan, envs: Sequence[EnvChoice], config: RunConfig,
                observer: ExecutionHooks | None = None,
                only_cases: Callable[[PlannedCase], bool] | None = None, *, stop_failing: bool = False) -> Run:
    """Run every execution of the plan that the store does not have yet; returns the finished run record.
    `stop_failing`: once a case fails in an environment, its other executions there are left out (a bisect's
    point that cannot read the file fails every process the same way: more are minutes of Valgrind for nothing).

    SIGINT or SIGTERM ends it: the running worker's process group is killed, the run is stored as
    `interrupted`, and `Interrupted` (with a line for the user in its detail) propagates."""
    observer = observer or ExecutionHooks()
    sweep_stale_exec_dirs()  # left by a colbench killed with -9 (its workers died with it)
    # or, under PYTHONDONTWRITEBYTECODE, every Python worker compiles colbench again
    cache_own_bytecode(e.python for e in envs if e.runtime == "python" and not e.broken)
    _mark_running(store, run)
    iterations, warmup, processes = config.resolved(plan)
    config = _counting_servers_decided(config, plan, envs)
    toolchain = counting_toolchain(config)
    tracer = memory_tracer(config)
    by_case: dict[str, list[Result]] = {}
    executions: list[Execution] = []
    results: Iterator[tuple[Execution, Result]] = iter(())
    stored = 0
    executor = current_executor() or LocalExecutor(local_jobs(config))
    with stop_on_signals() as stop:
        try:
            observer.preparing("preparing the input data (a file the cache lacks is built or downloaded)")
            inputs = prepare_inputs(plan.cases)
            executions = _missing_executions(store, run, plan, envs, config, processes, only_cases)
            counts = _CaseCounts(executions, stop_failing)
            job = Job(run, config, iterations, warmup, toolchain, inputs, store, skip=counts.skipped)
            _check(executor, job, executions, store, run)
            observer.at_once(executor.slots())
            observer.start(run, counts.cases, len(executions))

            def started(execution: Execution) -> None:
                if execution.case.case_id not in by_case:
                    by_case[execution.case.case_id] = []
                    observer.case_started(execution.case)
                observer.execution_started(execution)

            results = executor.results(executions, job, started)
            for execution, result in results:
                case = execution.case
                with stop.deferred():  # a completed result is stored whole before a signal takes effect
                    stored += _store_result(store, run, result, stored, len(executions))
                by_case[case.case_id].append(result)
                observer.execution_done(execution, result)
                if config.profile and result.ok:
                    _keep_profile(store, run, execution, inputs[case.case_id], warmup, config, toolchain, observer)
                if tracer is not None and result.ok:
                    _keep_memory_profile(store, run, execution, inputs[case.case_id], warmup, config, tracer,
                                         observer)
                if counts.case_done(execution, result):
                    observer.case_done(case, by_case[case.case_id])
            run.status = "interrupted" if run.stopped else "finished"  # not all run: `--resume` runs the rest
        except Interrupted as exc:
            _stop_all()  # the servers too, now: their orderly end (a case's teardown under Valgrind) is not awaited
            run.status = "interrupted"
            exc.detail = (f"run {run.run_id} interrupted by {signal_name(exc.signum)}: {stored} of "
                          f"{len(executions)} executions stored; `colbench run --resume {run.run_id}` runs the rest")
            raise
        except KeyboardInterrupt:
            run.status = "interrupted"
            raise
        except (StoreError, OSError) as exc:  # a full disk, a store that went away: stop, and say where
            run.status = "interrupted"
            run.stopped = {"after": stored, "of": len(executions), "error": redact(str(exc))[:500]}
            raise StoreError(f"run {run.run_id} stopped after {stored} of {len(executions)} executions: "
                             f"{_reason(exc)}; every result before it is stored: fix that, then `colbench run "
                             f"--resume {run.run_id}` runs the rest") from None
        finally:
            # executions side by side (runner/local_jobs.py) stop with the loop: their workers are killed now
            getattr(results, "close", lambda: None)()
            _close_run(store, run, stop, observer)
    # Every result is durable already (in the store, or in its spool while another process held it): wait for the
    # store to take what waits, or stop with a message that says where the results are.
    store.finish_writes()
    return run


def _counting_servers_decided(config: RunConfig, plan: Plan, envs: Sequence[EnvChoice]) -> RunConfig:
    """The config with `counting_server` decided where the user left it open (servers where they cost less), and what
    the servers hold (a case each, or the suite: `server_scope`)."""
    if "instructions" not in config.measure:
        return config
    from colbench.runner.count_server import server_scope, servers_pay

    served = config.counting_server
    if served is None:
        served = servers_pay(len(plan.cases))
    return replace(config, counting_server=served, counting_scope=server_scope(len(plan.cases)))


def _close_run(store: Store, run: Run, stop: StopSignals, observer: ExecutionHooks) -> None:
    """The run record stored as it ended (a signal waits for it), unless the run was refused and deleted."""
    run.finished_at = datetime.now(UTC).isoformat()
    if run.status == "refused":  # deleted (`_check`): nothing of it is left to store
        return
    with stop.deferred():
        _store_run_record(store, run)
    observer.finish(run)


def _check(executor: Executor, job: Job, executions: list[Execution], store: Store, run: Run) -> None:
    """The executor's check before the first execution (a cluster that cannot run the plan raises PlanError). A run
    it refuses is deleted when new (nothing stored: `run --cluster` refused leaves no run behind, its status
    "refused" in memory only); one with results stays, `interrupted`, for `--resume`."""
    try:
        executor.check(job, executions)
    except PlanError:
        if store.completed(run.run_id):
            run.status = "interrupted"
        else:
            store.delete_run(run.run_id, force=True)
            run.status = "refused"
        raise


def _mark_running(store: Store, run: Run) -> None:
    """The run record says this process runs it (a resumed run, a session's next look)."""
    stamp = process_stamp()
    if run.status != "running" or run.process != stamp:
        run.status, run.process = "running", stamp
        store.update_run(run)


def _missing_executions(store: Store, run: Run, plan: Plan, envs: Sequence[EnvChoice], config: RunConfig,
                        processes: int, only_cases: Callable[[PlannedCase], bool] | None) -> list[Execution]:
    """The plan's executions in their scheduled order, without those the store has (and the cases not wanted)."""
    done = store.completed(run.run_id)
    planned = schedule(plan.cases, envs, lambda c: config.processes_of(c, processes), config.seed)
    return [e for e in planned
            if (e.case.case_id, e.env.name, e.process_index) not in done
            and (only_cases is None or only_cases(e.case))]


def _store_result(store: Store, run: Run, result: Result, stored: int, planned: int) -> int:
    """Store a completed result (1); an execution that never ran (`process.executor.not_run`: no worker was left
    that may run it) is shown as the error it is but not stored, its cause on the run record, so that `run --resume`
    runs it (0)."""
    not_run = (result.process.get("executor") or {}).get("not_run")
    if not_run:
        run.stopped = {"after": stored, "of": planned, "error": redact(not_run)[:500]}
        return 0
    store.add_result(result)
    return 1


def _store_run_record(store: Store, run: Run) -> None:
    """Update the run's record as it ends; a store that fails again after an interruption is only logged."""
    try:
        store.update_run(run)
    except (StoreError, OSError) as exc:
        if run.status != "interrupted":
            raise
        log.warning("the run record of %s could not be updated either (%s)", run.run_id, _reason(exc))


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}" + (f" ({exc.filename})" if exc.filename else "")
    return str(exc).splitlines()[0][:300] if str(exc) else type(exc).__name__


def counting_toolchain(config: RunConfig) -> Any:
    """Valgrind and its helper when the run counts instructions (None otherwise); PlanError when unavailable."""
    if "instructions" not in config.measure and not config.profile:
        return None
    from colbench.runner.instructions import InstructionsUnavailable, find_toolchain

    try:
        return find_toolchain()
    except InstructionsUnavailable as exc:
        text = str(exc) if "instructions" in config.measure else str(exc).replace("--measure instructions", "--profile")
        raise PlanError(text) from None


def _keep_profile(store: Store, run: Run, execution: Execution, inputs: dict[str, InputFile], warmup: int,
                  config: RunConfig, toolchain: Any, observer: ExecutionHooks) -> None:
    """`run --profile`: once per case and environment (after its first successful execution, so a resumed run
    does not profile twice), the case once more under callgrind in a fresh worker, its profile kept in the
    store's profiles folder (profiles/stored.py). A profile that fails costs a warning, never the run."""
    from colbench.profiles.stored import case_folder, stored_profile
    from colbench.runner.profile import profile_case

    _keep_case_profile("profile", stored_profile, case_folder,
                       lambda spec, launch, folder: profile_case(spec, launch, toolchain, folder),
                       store, run, execution, inputs, warmup, config, observer)


def _keep_case_profile(what: str, stored: Callable[[Store, str, str, str], Any],
                       folder_of: Callable[[Store, str, str, str], Path], take: Callable[[Any, Any, Path], Any],
                       store: Store, run: Run, execution: Execution, inputs: dict[str, InputFile], warmup: int,
                       config: RunConfig, observer: ExecutionHooks) -> None:
    """What `--profile` and `--profile-memory` share: a Python case not yet profiled in this environment runs once
    more in a fresh worker (`take`), into its folder; a failure is a warning naming `what`."""
    case, env = execution.case, execution.env
    if case.runtime != "python" or stored(store, run.run_id, env.name, case.case_id) is not None:
        return
    observer.profiling(execution)
    try:
        launch, _ = launch_for(case, env, config)
        spec = case_spec(case, inputs, 1, warmup, config.seed + execution.process_index)
        done = take(spec, launch, folder_of(store, run.run_id, env.name, case.case_id))
    except (PlanError, OSError, ValueError) as exc:
        log.warning("no %s of %s [%s]: %s", what, case.case_id, env.name, _reason(exc))
        return
    if done.error:
        log.warning("no %s of %s [%s]: %s", what, case.case_id, env.name, done.error)


def memory_tracer(config: RunConfig) -> Any:
    """heaptrack and the pool shim when the run keeps memory profiles (None otherwise); PlanError when unavailable."""
    if not config.profile_memory:
        return None
    from colbench.runner.memory_profile import TracerUnavailable, find_tracer

    try:
        return find_tracer()
    except TracerUnavailable as exc:
        raise PlanError(str(exc).replace("--metric memory", "--profile-memory")) from None


def _keep_memory_profile(store: Store, run: Run, execution: Execution, inputs: dict[str, InputFile], warmup: int,
                         config: RunConfig, tracer: Any, observer: ExecutionHooks) -> None:
    """`run --profile-memory`: as `--profile`, once per case and environment, the case once more in a fresh worker
    under heaptrack (runner/memory_profile.py), its profile kept for `explain --metric memory`. A profile that fails
    costs a warning, never the run."""
    from colbench.profiles.stored import memory_folder, stored_memory_profile
    from colbench.runner.memory_profile import memory_profile_case

    _keep_case_profile("memory profile", stored_memory_profile, memory_folder,
                       lambda spec, launch, folder: memory_profile_case(spec, launch, tracer, folder),
                       store, run, execution, inputs, warmup, config, observer)


class LocalExecutor:
    """Today's runner: each execution in a fresh worker process on this machine, in the scheduled order
    (runner/executor.py): one after another, or `jobs` at once for a run that counts instructions only
    (runner/local_jobs.py)."""

    label = "local"

    def __init__(self, jobs: int = 1) -> None:
        self.jobs = jobs

    def check(self, job: Job, executions: Sequence[Execution]) -> None:
        """Nothing to refuse: one machine measures everything."""

    def slots(self) -> int:
        return self.jobs

    def results(self, executions: Sequence[Execution], job: Job, started: Started,
                ) -> Iterator[tuple[Execution, Result]]:
        if self.jobs > 1:
            from colbench.runner.local_jobs import side_by_side

            yield from side_by_side(executions, job, started, self.jobs, lambda e: self._one(e, job), _stop_all)
            return
        for execution in executions:
            if job.skip(execution):
                continue
            started(execution)
            yield execution, self._one(execution, job)

    @staticmethod
    def _one(execution: Execution, job: Job) -> Result:
        return execute_one(job.run, execution, job.inputs[execution.case.case_id], job.iterations, job.warmup,
                           job.config, job.toolchain)


def _stop_all() -> None:
    """Every worker and counting server of this orchestrator killed (executions side by side that must stop)."""
    from colbench.runner.count_server import SERVERS
    from colbench.runner.isolate import RUNNING
    from colbench.runner.suite_server import SUITE_SERVERS

    RUNNING.kill_all()
    SERVERS.kill_all()
    SUITE_SERVERS.kill_all()


class _Broken(Exception):
    """An environment that could not be built: its executions are error results with the cause."""


def execute_one(run: Run, execution: Execution, inputs: dict[str, InputFile], iterations: int, warmup: int,
                 config: RunConfig, toolchain: Any = None) -> Result:
    case, env = execution.case, execution.env
    spec = case_spec(case, inputs, iterations, warmup, config.seed + execution.process_index)
    try:
        if env.broken:  # a sweep's release whose environment does not install or import: no worker to start
            raise _Broken(f"environment {env.name}: {env.broken}")
        launch, warning = launch_for(case, env, config)
    except _Broken as exc:
        done, warning = WorkerOutcome(WorkerReport.failure("exception", str(exc)), {}), None
    except PlanError as exc:
        done, warning = WorkerOutcome(WorkerReport.failure("invalid", str(exc)), {}), None
    else:
        if config.measure == ("wall",):
            done = run_worker(spec, launch)
        else:
            from colbench.runner.instructions import run_measures

            done = run_measures(spec, launch, case.runtime, config.measure, toolchain,
                                (env.name, execution.process_index) if config.counting_server else None,
                                scope=config.counting_scope or "case")
    report = done.report
    bad = invalid_number(report, config.timeout_s)
    if bad:
        report = WorkerReport.failure("invalid", f"the worker's result does not count: {bad}")
    if warning:
        report.warnings.append(warning)
    # the environment's variables and a worker's error text may quote a secret: the stored result never does
    return build_result(
        run=run, case_id=case.case_id, benchmark=case.benchmark.name, params=case.params,
        engine=case.engine, runtime=case.runtime, env=env, process_index=execution.process_index,
        block=execution.block, iterations=iterations, warmup=warmup, inputs=inputs, report=report,
        process=done.process).redacted()

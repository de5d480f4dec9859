"""`--cluster`: a run's executions on the workers of a Dask cluster (the client side; `cluster_task.py` is what the
workers run). The client plans, submits, and stores each result as it comes back; it alone writes the store.

What may be spread, and what may not:
- **instruction counts** do not depend on which machine of one CPU kind counts them: every (case, environment,
  process) is a task of its own, on any worker. Before a counting pass the client asks every worker for its CPU's
  model, architecture and feature flags; workers of several kinds are refused in one line, or, with
  `COLBENCH_CLUSTER_KINDS=split`, each case goes whole to the workers of one kind (its sides compared on one kind).
- **wall times** are comparable only on one machine: every block of every side of a case is one task, run in order
  on one worker, so each verdict comes from one machine; later blocks of that case (`--until-decided`'s next looks,
  `--resume`) go to the worker that measured the first, and when it has left they are error results that say so.
A worker killed mid-task has its task run again elsewhere (the scheduler reschedules what a lost worker held, up to
`distributed.scheduler.allowed-failures` times; `retries` covers a task that raised); the client stores what a
task returns once, so the store holds each process's result once.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from colbench.model.records import ExecutorInfo, Result
from colbench.redact import redact
from colbench.runner.cluster_env import EnvTicket, ticket_for
from colbench.runner.cluster_task import Task, WorkerFacts, run_task, worker_facts
from colbench.runner.cluster_watch import DASKS_OWN, NOT_RUN, OrphanWatch, Placement, grace_s
from colbench.runner.execute import execute_one
from colbench.runner.executor import Job, Started
from colbench.runner.plan import Execution, PlanError

#: `split`: a counting run over workers of several CPU kinds gives each case to one kind instead of refusing
KINDS_ENV = "COLBENCH_CLUSTER_KINDS"
#: a task that raised (not one whose worker died: the scheduler reschedules those by itself) runs again this often
RETRIES = 1
#: the progress line's running tasks are the scheduler's view at most this old (asking is a round trip)
RUNNING_EVERY_S = 2.0
#: Dask's setting that decides how many queued tasks the scheduler hands a worker beyond its threads
SATURATION_KEY = "distributed.scheduler.worker-saturation"
SATURATION_ENV = "DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION"
#: Dask's pollers, quietened: a worker whose task waits on its counting or timed process sampled its threads every
#: 10 ms (the profiler), checked its event loop every 20 ms and its memory every 100 ms: with its nanny 3.9-4.1% of
#: a core while the task waited, 0.4-0.5% with these (docs/scale.md), on the machine that measures
QUIET_WORKER = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
                "distributed.admin.system-monitor.interval": "5s", "distributed.worker.memory.monitor-interval": "1s"}


def dask_env(key: str) -> str:
    """The environment variable that sets a Dask config key (`distributed.admin.tick.interval` →
    DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL), as Dask reads them."""
    return "DASK_" + key.upper().replace(".", "__").replace("-", "_")


def loud_settings() -> list[str]:
    """On a worker: the QUIET_WORKER keys this worker has at other values (Dask's own defaults: every one)."""
    import dask

    return [key for key, quiet in QUIET_WORKER.items()
            if str(dask.config.get(key, None)).lower() != str(quiet).lower()]


@dataclass
class Tally:
    """One worker's tasks: running now, and done."""

    running: int = 0
    done: int = 0


def progress_line(queued: int, tallies: dict[str, Tally]) -> str:
    """`cluster: 4 queued · worker w1: 1 running, 3 done · worker w2: 1 running, 2 done` (tasks)"""
    parts = [f"worker {name}: {t.running} running, {t.done} done" for name, t in sorted(tallies.items())]
    return " · ".join([f"cluster: {queued} queued", *parts])


def counts_only(job: Job) -> bool:
    return "wall" not in job.config.measure


class DaskExecutor:
    """Runs executions on a Dask cluster through `client` (a `distributed.Client`); `say` hears the per-worker
    progress lines."""

    def __init__(self, client: Any, label: str, say: Callable[[str], None] = lambda _: None) -> None:
        self.client = client
        self.label = f"dask {label}"
        self.say = say
        #: (run id, case id) → the worker that measured that wall-time case
        self.affinity: dict[tuple[str, str], str] = {}
        self._kinds: dict[str, list[WorkerFacts]] = {}
        self._asked_running = -RUNNING_EVERY_S
        self._processing: dict[str, int] = {}
        self._settings_said = False

    def workers(self) -> list[WorkerFacts]:
        """Every worker's identity and CPU kind, asked of the workers themselves."""
        found: dict[str, WorkerFacts] = self.client.run(worker_facts)
        return sorted(found.values(), key=lambda f: f.name)

    def check(self, job: Job, executions: Sequence[Execution]) -> None:
        if not executions:
            return
        if job.config.profile or job.config.profile_memory:
            # the run loop takes a case's profile where it runs (here): it would not be of the worker that measured
            flag = "--profile" if job.config.profile else "--profile-memory"
            raise PlanError(f"{self.label}: {flag} takes its profiles on this machine, not on the worker that "
                            f"measured, so they would not match the measurement; run {flag} without --cluster, "
                            "or `colbench explain` the change on the machine that measured it")
        facts = self.workers()
        if not facts:
            raise PlanError(f"{self.label}: the scheduler has no workers; start some with `dask worker ADDRESS "
                            "--nthreads 1`")
        kinds: dict[str, list[WorkerFacts]] = {}
        for fact in facts:
            kinds.setdefault(fact.kind, []).append(fact)
        self._kinds = kinds
        self._say_settings()
        if counts_only(job) and len(kinds) > 1 and os.environ.get(KINDS_ENV) != "split":
            listed = "; ".join(f"{len(ws)}× {kind}" for kind, ws in kinds.items())
            raise PlanError(f"{self.label}: workers of {len(kinds)} CPU kinds ({listed}): instruction counts differ "
                            f"between kinds; use workers of one kind, or set {KINDS_ENV}=split to give each case "
                            "to one kind")
        if not counts_only(job):
            busy = {name: n for name, n in self._threads().items() if n > 1}
            if busy:
                name, n = next(iter(busy.items()))
                raise PlanError(f"{self.label}: worker {name} runs {n} tasks at once: wall times need one at a time; "
                                "start workers with `dask worker ADDRESS --nthreads 1` (counting runs may share)")

    def _say_settings(self) -> None:
        """One line each, once, for Dask settings that cost colbench's runs: a scheduler that hands a one-thread worker
        a second task while the first runs (Dask's default worker-saturation 1.1: ceil(1.1 × 1) = 2; at the end of a
        run that task can wait behind the other while another worker idles), and workers whose pollers run while
        their task waits on the measured process (QUIET_WORKER)."""
        if self._settings_said:
            return
        self._settings_said = True
        try:
            saturation = self.client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.WORKER_SATURATION)
        except Exception:  # noqa: BLE001 - an older scheduler without the setting: nothing to say
            saturation = None
        threads = self._threads()
        if isinstance(saturation, (int, float)) and threads and any(
                math.ceil(saturation * n) > n for n in threads.values()):
            self.say(f"cluster: the scheduler queues {saturation} tasks a worker thread ({SATURATION_KEY}), so "
                     "the last tasks may wait on a busy worker while another idles; start it with "
                     f"{SATURATION_ENV}=1.0 for runs of long tasks")
        try:
            loud = sorted({key for keys in self.client.run(loud_settings).values() for key in keys})
        except Exception:  # noqa: BLE001 - a worker that cannot answer: the run's own checks say more
            loud = []
        if loud:
            self.say("cluster: the workers poll while their task waits on the measured process (Dask's profiler "
                     "every 10 ms, its event-loop and memory checks: about 4% of a core each); start them with "
                     + " ".join(f"{dask_env(key)}={QUIET_WORKER[key]}" for key in loud))

    def slots(self) -> int:
        """Tasks the cluster runs at once: its workers' threads (one each for wall time: `check`)."""
        return max(1, sum(self._threads().values()))

    def _threads(self) -> dict[str, int]:
        info = self.client.scheduler_info()
        return {str(w.get("name", a)): int(w.get("nthreads", 1)) for a, w in info.get("workers", {}).items()}

    def results(self, executions: Sequence[Execution], job: Job, started: Started,
                ) -> Iterator[tuple[Execution, Result]]:
        futures, refused, placements = self._submit(executions, job)
        for group, reason in refused:  # "not run: …" can run later (`--resume`), the others never will
            yield from (self._not_run if reason.startswith(NOT_RUN) else self._failed)(group, job, started, reason)
        by_key = {future.key: future for future in futures}
        watch = OrphanWatch(self.client, grace_s(), lambda keys: self.client.cancel([by_key[k] for k in keys]),
                            self._resume_advice(job))
        watch.start(placements)
        tallies: dict[str, Tally] = {}
        seen: set[str] = set()
        not_run: Counter[str] = Counter()
        left = len(futures)
        self.say(progress_line(left, tallies) + f" ({len(futures)} tasks on {self._workers_line()})")
        try:
            for future, outcome in self._outcomes(list(futures)):
                group = futures.pop(future)
                watch.done(future.key)
                left -= 1
                cause = watch.cause(future.key) or _dasks_own_giving_up(outcome, self._resume_advice(job))
                if cause is not None:
                    not_run[placements[future.key].where] += len(group)
                    yield from self._not_run(group, job, started, cause)
                    continue
                for execution, result in self._collect(outcome, group, job, started):
                    if result.result_id in seen:  # a task Dask ran twice: its result counts once
                        continue
                    seen.add(result.result_id)
                    worker = str((result.process.get("executor") or {}).get("worker") or "?")
                    tallies.setdefault(worker, Tally()).done += 1
                    self._remember(job, execution, worker)
                    yield execution, result
                self.say(progress_line(max(0, left - self._running(tallies, left)), tallies))
            for where, count in not_run.items():
                self.say(f"cluster: {count} execution{'s' if count != 1 else ''} not run: no {where} left in the "
                         f"cluster; {self._resume_advice(job)}")
        finally:
            watch.stop()
            if futures:  # interrupted: what is queued never starts; a task running now ends on its worker, unstored
                self.client.cancel(list(futures))

    def _resume_advice(self, job: Job) -> str:
        return (f"start one (`dask worker {self.client.scheduler.address} --nthreads 1`), then "
                f"`colbench run --resume {job.run.run_id} --cluster …` runs what was not run")

    def _outcomes(self, futures: list[Any]) -> Iterator[tuple[Any, Any]]:
        """(future, its results or the exception it failed with) as tasks end; the results of the tasks that ended
        together are fetched in one round trip (one per task cost the client more than the scheduler did)."""
        from distributed import as_completed

        for batch in as_completed(futures, loop=self.client.loop).batches():
            finished = [f for f in batch if f.status == "finished"]
            try:
                fetched = dict(zip(finished, self.client.gather(finished), strict=True))
            except Exception:  # noqa: BLE001 - one lost on the way (its worker died since): each on its own
                fetched = {}
            for future in batch:
                if future in fetched:
                    yield future, fetched[future]
                    continue
                try:
                    yield future, future.result()
                except Exception as exc:  # noqa: BLE001 - failed for good (KilledWorker, cancelled, …)
                    yield future, exc

    def _submit(self, executions: Sequence[Execution], job: Job,
                ) -> tuple[dict[Any, tuple[Execution, ...]], list[tuple[tuple[Execution, ...], str]],
                           dict[str, Placement]]:
        """Every task to the scheduler, in one message per set of workers they may run on (a message per task costs
        the scheduler a graph update each); returns future → its executions, what cannot run with the reason, and
        where each task (by key) may run."""
        tickets = tickets_of(executions)
        batches: dict[tuple[str, ...] | None, list[tuple[str, Task]]] = {}
        refused: list[tuple[tuple[Execution, ...], str]] = []
        groups: dict[str, tuple[Execution, ...]] = {}
        placements: dict[str, Placement] = {}
        for index, (group, workers, reason) in enumerate(self._groups(executions, job)):
            if reason:
                refused.append((group, reason))
                continue
            key = f"colbench-{job.run.run_id}-{group[0].case.case_id}-{group[0].env.name}-{group[0].process_index}" \
                  f"-{index}-{os.getpid()}"
            task = Task(job.run, job.config, job.iterations, job.warmup, group,
                        {e.env.name: tickets[e.env.name] for e in group})
            batches.setdefault(tuple(workers) if workers is not None else None, []).append((key, task))
            groups[key] = group
            placements[key] = self._placement(workers)
        futures: dict[Any, tuple[Execution, ...]] = {}
        for allowed, batch in batches.items():
            submitted = self.client.map(run_task, [task for _, task in batch], key=[key for key, _ in batch],
                                        pure=False, retries=RETRIES, workers=list(allowed) if allowed else None,
                                        allow_other_workers=False)
            futures.update((future, groups[key]) for future, (key, _) in zip(submitted, batch, strict=True))
        return futures, refused, placements

    def _placement(self, workers: list[str] | None) -> Placement:
        """Where a task may run, in words for the cause of one that no worker is left to run."""
        if workers is None:
            return Placement(None, "worker")
        allowed = frozenset(workers)
        kind = next((kind for kind, ws in self._kinds.items() if {f.address for f in ws} == allowed), None)
        if kind is not None and len(self._kinds) > 1:
            return Placement(allowed, f"worker of CPU kind {kind}")
        names = sorted(f.name for ws in self._kinds.values() for f in ws if f.address in allowed)
        return Placement(allowed, f"worker {', '.join(names) or ', '.join(sorted(allowed))}")

    def _workers_line(self) -> str:
        count = sum(len(ws) for ws in self._kinds.values())
        return f"{count} worker{'s' if count != 1 else ''}"

    def _running(self, tallies: dict[str, Tally], left: int) -> int:
        """Each worker's tasks running now (the scheduler's view, asked at most every `RUNNING_EVERY_S`: it is a
        round trip to the scheduler), into `tallies`; returns their sum."""
        now = time.monotonic()
        if not left:  # every task is in: none runs
            self._processing = {}
        elif now - self._asked_running >= RUNNING_EVERY_S:
            self._asked_running = now
            try:
                self._processing = {address: len(keys) for address, keys in self.client.processing().items()}
            except (OSError, TimeoutError):
                self._processing = {}
        processing = self._processing
        names = {f.address: f.name for ws in self._kinds.values() for f in ws}  # asked once, before the pass
        for tally in tallies.values():
            tally.running = 0
        for address, running in processing.items():
            tallies.setdefault(names.get(address, address), Tally()).running = running
        return sum(t.running for t in tallies.values())

    def _collect(self, outcome: Any, group: tuple[Execution, ...], job: Job, started: Started,
                 ) -> Iterator[tuple[Execution, Result]]:
        """A task's results, or error results when it failed for good: `outcome` is its list of results or the
        exception it failed with (one that raised twice, KilledWorker for one whose workers died, cancelled)."""
        if isinstance(outcome, BaseException):
            exc = outcome
            reason = f"the cluster could not run it: {type(exc).__name__}: {redact(str(exc)).splitlines()[0][:300]}" \
                if str(exc) else f"the cluster could not run it: {type(exc).__name__}"
            yield from self._failed(group, job, started, reason)
            return
        for execution, result in zip(group, outcome, strict=True):
            started(execution)
            yield execution, result

    def _failed(self, group: tuple[Execution, ...], job: Job, started: Started, reason: str,
                ) -> Iterator[tuple[Execution, Result]]:
        for execution in group:
            started(execution)
            env = dataclasses.replace(execution.env, broken=reason)
            yield execution, execute_one(job.run, dataclasses.replace(execution, env=env),
                                         job.inputs.get(execution.case.case_id, {}), job.iterations, job.warmup,
                                         job.config)

    def _not_run(self, group: tuple[Execution, ...], job: Job, started: Started, cause: str,
                 ) -> Iterator[tuple[Execution, Result]]:
        """Error results of executions that never ran, marked so (`process.executor.not_run`): the run loop shows
        them and leaves them out of the store, so `run --resume` runs them."""
        for execution, result in self._failed(group, job, started, cause):
            result.process["executor"] = ExecutorInfo(kind="dask", not_run=cause)
            yield execution, result

    def _remember(self, job: Job, execution: Execution, worker: str) -> None:
        if not counts_only(job):
            self.affinity.setdefault((job.run.run_id, execution.case.case_id), worker)

    def _groups(self, executions: Sequence[Execution], job: Job,
                ) -> list[tuple[tuple[Execution, ...], list[str] | None, str]]:
        """(executions of one task, the workers it may run on (None: any), why it cannot run at all ('' if it can))."""
        if counts_only(job):
            kind_of, refused = self._kind_of_cases(executions, job)
            return [((e,), kind_of.get(e.case.case_id), refused.get(e.case.case_id, "")) for e in executions]
        by_case: dict[str, list[Execution]] = {}
        for execution in executions:
            by_case.setdefault(execution.case.case_id, []).append(execution)
        earlier = self._earlier_workers(job, set(by_case))
        addresses = {f.name: f.address for ws in self._kinds.values() for f in ws}
        groups: list[tuple[tuple[Execution, ...], list[str] | None, str]] = []
        for case_id, members in by_case.items():
            before = earlier.get(case_id)
            if before is None:
                groups.append((tuple(members), None, ""))
            elif before in addresses:
                groups.append((tuple(members), [addresses[before]], ""))
            else:
                groups.append((tuple(members), None,
                               f"its earlier blocks ran on {before}, which is not in the cluster now: a wall-time "
                               "comparison is measured whole on one machine; start a new run for this case"))
        return groups

    def _earlier_workers(self, job: Job, cases: set[str]) -> dict[str, str]:
        """Case id → the worker that measured its earlier results in this run ('this machine' for the local runner)."""
        found = {c: w for (run_id, c), w in self.affinity.items() if run_id == job.run.run_id and c in cases}
        if job.store is None:
            return found
        from colbench.store.base import ResultQuery

        for result in job.store.results(ResultQuery(run_ids=(job.run.run_id,))):
            if result.case_id in cases and result.case_id not in found:
                executor = result.process.get("executor") or {}
                found[result.case_id] = str(executor.get("worker") or "this machine (the local runner)")
        return found

    def _kind_of_cases(self, executions: Sequence[Execution], job: Job,
                       ) -> tuple[dict[str, list[str]], dict[str, str]]:
        """A counting run over several CPU kinds (split): case id → the addresses of the one kind that counts it,
        cases dealt to kinds in proportion to their workers; a case with results of this run already (`--resume`,
        a later look) stays on their kind, and is refused (case id → why) when that kind has no worker now. One
        kind: no restriction."""
        if len(self._kinds) < 2:
            return {}, {}
        kinds = list(self._kinds)
        workers = [[f.address for f in self._kinds[kind]] for kind in kinds]
        cases = list(dict.fromkeys(e.case.case_id for e in executions))
        earlier = self._earlier_kinds(job, set(cases))
        load = Counter[int]()
        chosen: dict[str, list[str]] = {}
        refused: dict[str, str] = {}
        for case_id in cases:
            before = earlier.get(case_id)
            if before is not None and before not in kinds:
                refused[case_id] = (f"{NOT_RUN}its other processes were counted on CPU kind {before}, which has no "
                                    "worker in the cluster now (counts of two kinds are not compared): start one of "
                                    f"that kind, then `colbench run --resume {job.run.run_id} --cluster …` again")
                continue
            # its earlier kind, else the kind whose workers would have the fewest cases each (a tie: fewer cases)
            kind = kinds.index(before) if before is not None else \
                min(range(len(workers)), key=lambda k: ((load[k] + 1) / len(workers[k]), load[k]))
            load[kind] += 1
            chosen[case_id] = workers[kind]
        return chosen, refused

    def _earlier_kinds(self, job: Job, cases: set[str]) -> dict[str, str]:
        """Case id → the CPU kind that counted its results stored in this run already (on a cluster)."""
        if job.store is None:
            return {}
        from colbench.store.base import ResultQuery

        found: dict[str, str] = {}
        for result in job.store.results(ResultQuery(run_ids=(job.run.run_id,))):
            kind = (result.process.get("executor") or {}).get("cpu_kind")
            if result.case_id in cases and kind and result.ok:
                found.setdefault(result.case_id, str(kind))
        return found


def _dasks_own_giving_up(outcome: Any, advice: str) -> str | None:
    """The cause of a task the scheduler gave up on itself (its own `no-workers-timeout`), else None."""
    if isinstance(outcome, BaseException) and type(outcome).__name__ in DASKS_OWN:
        return f"{NOT_RUN}the scheduler found no worker for it ({type(outcome).__name__}); {advice}"
    return None


def tickets_of(executions: Sequence[Execution]) -> dict[str, EnvTicket]:
    """Each environment's ticket, once per name."""
    envs = {e.env.name: e.env for e in executions}
    return {name: ticket_for(env) for name, env in envs.items()}

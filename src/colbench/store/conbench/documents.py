"""colbench's results as Conbench documents: one BenchmarkResult per case, and one run record per run.

A *case* here is what `colbench compare` compares: one benchmark with one set of parameters in one environment of
one run, measured by several worker processes. Conbench gets one BenchmarkResult for it, whose `stats.data` holds
one value per worker process — the median of that process's timed iterations, in seconds. That is the unit
colbench's statistics count (comparisons, intervals and verdicts are over processes, docs/gating.md): the
iterations of one process share its memory layout, page cache and CPU, so they are not independent repetitions,
and sending them all would make Conbench's spread (and its z-scores) look tighter than it is.

Fields (Conbench's BenchmarkResult and Run schemas, read in `conbench/entities/benchmark_result.py` and
`conbench/entities/run.py` of conbench/conbench, https://github.com/conbench/conbench):

- `tags`: the case's `name` and parameters, so Conbench's case (and so its history) is the same case across runs
  and machines. `context`: what changes performance and stays put across history (language, engine, environment
  name, colbench's machine fingerprint). `info`: the software (language and library versions): a new version
  does not break Conbench's history. `optional_benchmark_info`: colbench's own ids and counts for this result.
- `batch_id` is `<run>-<case>-<environment>`: deterministic, so the publisher can ask the server which cases of a
  run it holds already (publishing is idempotent and resumable through it).
- Errors: a case whose processes all failed is a Conbench error result (`error`, no `stats`); a case where some
  failed carries both, as Conbench documents for partial results (the values are then kept out of comparisons).
- `github`: see `github_field`: the project under test, or Conbench's own way of saying "no commit".
"""

from __future__ import annotations

import os
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from colbench.model.metrics import metric
from colbench.model.records import Result, Run
from colbench.redact import clip, redact
from colbench.runtimes import RUNTIMES

#: what colbench sends: wall time of the timed call, the metric `colbench compare` decides by default
TIME = metric("time")


@dataclass(frozen=True)
class Project:
    """The code under test as Conbench's `github` object names it: a GitHub repository and a commit, either of
    which may be unknown (a run of released libraries has no commit)."""

    repository: str | None = None
    commit: str | None = None


def github_repository(url: str | None) -> str | None:
    """`url` as Conbench wants it (https://github.com/org/repo), or None when it is not a GitHub repository."""
    if not url:
        return None
    url = url.strip()
    if url.startswith("git@github.com:"):
        url = "https://github.com/" + url[len("git@github.com:"):]
    if not url.startswith("https://github.com/"):
        return None
    return url.removesuffix(".git").rstrip("/")


def project_of(run: Run | None, results: Sequence[Result], repository: str | None = None) -> Project:
    """The project of a run: its commit (`--commit`/`--repo`), and the repository given (`--github-repository`),
    else the commit's own when it is a GitHub URL, else $CONBENCH_PROJECT_REPOSITORY (benchadapt's variable)."""
    commit = (run.commit if run else None) or next((r.commit for r in results if r.commit), None) or {}
    repo = github_repository(repository) or github_repository(commit.get("repository")) or \
        github_repository(os.environ.get("CONBENCH_PROJECT_REPOSITORY"))
    return Project(repo, str(commit["sha"]) if commit.get("sha") else None)


def github_field(project: Project, *, commit_required: bool) -> dict[str, str] | None:
    """Conbench's `github` object, or None to leave it out.

    The stand-in for "no commit" (a run of released libraries) is Conbench's own: servers of the /api/benchmarks/
    generation (up to 2023.4.10) require `commit` inside `github`, and without `github` they file the run under
    their commit-less "no context" commit; later servers require `github.repository` and take a missing `commit`
    as "not associated with a commit" (kept out of commit-based history). A commit without a repository cannot
    be sent: `publish` refuses that before posting anything."""
    if not project.repository:
        return None
    if project.commit:
        return {"repository": project.repository, "commit": project.commit}
    return None if commit_required else {"repository": project.repository}


# -- cases ---------------------------------------------------------------------------------------------------------


def case_key(result: Result) -> str:
    """The Conbench batch id of a result's case: deterministic, one per case and environment of a run."""
    return f"{result.run_id}-{result.case_id}-{result.env_name or 'default'}"


def group_cases(results: Iterable[Result]) -> list[list[Result]]:
    """The results of each case, in the order the cases first appear, each case's processes in order."""
    cases: dict[str, list[Result]] = {}
    for result in results:
        cases.setdefault(case_key(result), []).append(result)
    return [sorted(case, key=lambda r: int(r.process_index or 0)) for case in cases.values()]


def process_value(result: Result) -> float | None:
    """One process's value for Conbench: the median of its timed iterations' wall times, or None when the process
    failed or timed nothing (the same processes `colbench compare` leaves out)."""
    if not result.ok:
        return None
    values = TIME.values(result)
    if not values or not all(v > 0 for v in values):
        return None
    return float(statistics.median(values))


def _failure(results: Sequence[Result], processes: int) -> dict[str, Any]:
    """Conbench's `error` object for the processes of a case that gave no value."""
    first = dict(results[0].error or {})
    if results[0].ok:  # it ran, but timed nothing Conbench can take
        first = {"kind": "no-wall-time", "message": "only instructions were counted (run --measure instructions); "
                 "Conbench receives wall times"}
    error = {"kind": str(first.get("kind") or "error"), "failed_processes": len(results), "processes": processes}
    if first.get("message"):
        error["message"] = clip(redact(str(first["message"])), 500)
    return error


def _tag_value(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return repr(value)  # Conbench refuses lists and objects as tag values


def _language(name: str) -> str:
    return RUNTIMES[name].display if name in RUNTIMES else name


def _when(text: str) -> datetime:
    return datetime.fromisoformat(str(text).replace("Z", "+00:00"))


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$", re.IGNORECASE)


def _bytes(size: Any) -> int:
    """Cache sizes as Linux writes them (`48K`, `2048K`, `32M`) in bytes; 0 when unknown."""
    if isinstance(size, int | float):
        return int(size)
    match = _SIZE.match(str(size or ""))
    if not match:
        return 0
    return int(float(match.group(1)) * 1024 ** " KMGT".index(match.group(2).upper() or " "))


def conbench_machine(machine: Mapping[str, Any]) -> dict[str, Any]:
    """Conbench's `machine_info`. colbench does not record the CPU's maximum frequency or GPUs: they are sent as
    0 and [] (what Conbench's own examples send for unknown)."""
    caches = machine.get("cpu_caches") or {}
    return {
        "name": str(machine.get("name") or machine.get("hostname") or "unknown"),
        "architecture_name": str(machine.get("architecture") or ""),
        "kernel_name": str(machine.get("kernel") or ""),
        "os_name": str(machine.get("os") or ""),
        "os_version": str(machine.get("os_release") or ""),
        "cpu_model_name": str(machine.get("cpu_model") or ""),
        "cpu_l1d_cache_bytes": _bytes(caches.get("L1d")),
        "cpu_l1i_cache_bytes": _bytes(caches.get("L1i")),
        "cpu_l2_cache_bytes": _bytes(caches.get("L2")),
        "cpu_l3_cache_bytes": _bytes(caches.get("L3")),
        "cpu_core_count": int(machine.get("cpu_cores") or 0),
        "cpu_thread_count": int(machine.get("cpu_threads") or 0),
        "cpu_frequency_max_hz": int(machine.get("cpu_frequency_max_hz") or 0),
        "memory_bytes": int(machine.get("memory_bytes") or 0),
        "gpu_count": int(machine.get("gpu_count") or 0),
        "gpu_product_names": list(machine.get("gpu_product_names") or []),
    }


def benchmark_result(case: Sequence[Result], run: Run | None, project: Project, *,
                     commit_required: bool = False, run_reason: str | None = None) -> dict[str, Any]:
    """The Conbench BenchmarkResult of one case (the results of its worker processes)."""
    first = case[0]
    values = [(r, process_value(r)) for r in case]
    data = [v for _, v in values if v is not None]
    failed = [r for r, v in values if v is None]
    runtime = first.runtime or {}
    language = _language(str(runtime.get("name") or "python"))
    doc: dict[str, Any] = {
        "run_id": first.run_id,
        "batch_id": case_key(first),
        "timestamp": min((str(r.timestamp) for r in case), key=_when),
        "tags": {k: _tag_value(v) for k, v in (first.tags or {"name": first.benchmark, **first.params}).items()},
        "context": _context(first, language),
        "info": _info(first, language, runtime),
        "optional_benchmark_info": _optional_info(case, run),
        "machine_info": conbench_machine(first.machine or (run.machine if run else None) or {}),
    }
    name = first.run_name or (run.name if run else None)
    if name:
        doc["run_name"] = str(name)
    if run_reason:
        doc["run_reason"] = run_reason
    github = github_field(project, commit_required=commit_required)
    if github:
        doc["github"] = github
    _add_outcome(doc, data, failed, len(case))
    return doc


def _add_outcome(doc: dict[str, Any], data: list[float], failed: list[Result], processes: int) -> None:
    """The processes' values (`stats`), and the failed processes' errors (`error`)."""
    if data:
        # `times` and `time_unit` are required by servers up to 2023.4.10: for a duration they repeat `data`
        doc["stats"] = {"data": data, "times": data, "unit": TIME.unit, "time_unit": TIME.unit,
                        "iterations": len(data)}
    if failed:
        doc["error"] = _failure(failed, processes)


def _context(first: Result, language: str) -> dict[str, Any]:
    """What Conbench tells cases apart by beside their tags: the language, engine, environment and machine."""
    context = {"benchmark_language": language, "engine": first.engine, "env_name": first.env_name,
               "colbench_machine_id": first.machine_id}
    return {k: v for k, v in context.items() if v is not None}


def _info(first: Result, language: str, runtime: Mapping[str, Any]) -> dict[str, Any]:
    """The language's and the libraries' versions, and the environment's key."""
    env = first.env or {}
    info: dict[str, Any] = {
        "benchmark_language_version": f"{language} {runtime.get('version') or ''}".strip(),
        **{f"{lib}_version": str(version) for lib, version in sorted(first.versions.items()) if lib != "python"},
    }
    if env.get("key"):
        info["env_key"] = str(env["key"])
    return info


def _optional_info(case: Sequence[Result], run: Run | None) -> dict[str, Any]:
    """colbench's own facts of the case: its ids, processes, iterations, cache, and the run's finish."""
    first = case[0]
    cache = first.cache or {}
    return {
        "colbench_run_id": first.run_id, "colbench_case_id": first.case_id,
        "colbench_result_ids": [r.result_id for r in case], "processes": len(case),
        "value": "median wall time of each worker process's timed iterations",
        "iterations_per_process": first.iterations, "warmup_iterations": first.warmup,
        "cache": cache.get("achieved") or cache.get("requested"),
        # where the server keeps no run records (Conbench since August 2023), the run's finish time is here
        "run_finished_at": run.finished_at if run else None,
        **_values_info(case),
    }


#: a benchmark's own values that Conbench cannot hold as a result (its units are durations and rates): asv's
#: mem_, peakmem_ and track_ values (model/metrics.py), published beside the case's time, one per process
VALUE_METRICS = ("asv_mem", "asv_peakmem", "asv_track")


def _values_info(case: Sequence[Result]) -> dict[str, Any]:
    """Each value metric the case recorded: its per-process medians and its unit (a track_ benchmark's
    `unit`, or bytes)."""
    info: dict[str, Any] = {}
    for name in VALUE_METRICS:
        values = [statistics.median(v) for v in (metric(name).values(r) for r in case if r.ok) if v]
        if values:
            info[name] = values
            info[f"{name}_unit"] = next((r.units.get(name) for r in case if r.units.get(name)), metric(name).unit)
    return info


def case_documents(results: Sequence[Result], run: Run | None, project: Project, *,
                   commit_required: bool = False, run_reason: str | None = None) -> list[dict[str, Any]]:
    return [benchmark_result(case, run, project, commit_required=commit_required, run_reason=run_reason)
            for case in group_cases(results)]


# -- the run -------------------------------------------------------------------------------------------------------


def _error_type(docs: Sequence[Mapping[str, Any]], run: Run) -> str:
    """Conbench's run `error_type`: none (all good), partial (some cases failed, or the run was stopped before
    its end), catastrophic (no case gave a value)."""
    failed = sum(1 for d in docs if "error" in d)
    if docs and all("stats" not in d for d in docs):
        return "catastrophic"
    return "partial" if failed or run.status == "interrupted" else "none"


def run_record(run: Run, docs: Sequence[Mapping[str, Any]], project: Project, *,
               commit_required: bool = True, run_reason: str | None = None) -> dict[str, Any]:
    """The Conbench Run (`POST /api/runs/` of servers that keep run records): name, reason, finish time, hardware,
    commit, and colbench's view of the run in `info`."""
    machine_info = conbench_machine(run.machine) if run.machine else \
        next((d["machine_info"] for d in docs), conbench_machine({}))
    record: dict[str, Any] = {
        "id": run.run_id,
        "info": {
            "colbench_run_id": run.run_id, "colbench_version": run.colbench_version,
            "colbench_status": run.status, "started_at": run.started_at,
            "command": " ".join(redact(str(a)) for a in run.argv),
            "cases": len(docs), "environments": sorted({str(d["context"].get("env_name")) for d in docs}),
        },
        "machine_info": machine_info,
        "error_type": _error_type(docs, run),
    }
    if run.name:
        record["name"] = str(run.name)
    if run_reason:
        record["reason"] = run_reason
    if run.finished_at:
        record["finished_timestamp"] = str(run.finished_at)
    failed = [d for d in docs if "error" in d]
    if failed or run.stopped:
        record["error_info"] = {"failed_cases": len(failed), "cases": len(docs),
                                **({"stopped": run.stopped} if run.stopped else {})}
    github = github_field(project, commit_required=commit_required)
    if github:
        record["github"] = github
    return record


def run_update(record: Mapping[str, Any]) -> dict[str, Any]:
    """What `PUT /api/runs/<id>/` may change in a run Conbench holds already (its finish time after a resume)."""
    return {k: record[k] for k in ("finished_timestamp", "info", "error_type", "error_info") if k in record}

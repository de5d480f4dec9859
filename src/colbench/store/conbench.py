"""Publishing to Conbench: colbench results as Conbench BenchmarkResult documents, and a small API client.

What Conbench expects (read from the conbench/conbench repository: `conbench/entities/benchmark_result.py` —
`_BenchmarkResultCreateSchema`, `BenchmarkResultStatsSchema`, `SchemaGitHubCreate`, `BenchmarkResult.create`,
`validate_and_augment_result_tags`, `validate_and_aggregate_samples`; `conbench/entities/hardware.py` —
`MachineCreate`; `conbench/units.py`; `conbench/api/auth.py` — `LoginAPI`; `conbench/api/results.py` — the
`/benchmark-results/` route):

- `POST /api/benchmark-results/` (login required; 201 Created, 400 with a `description` on validation errors,
  401 when not logged in). `POST /api/login/` with `{"email", "password"}` answers 204 and sets a session cookie;
  a wrong login answers 400 "Invalid email or password.". The marshmallow schemas reject unknown fields.
- Required: `run_id` (string), `batch_id` (string), `timestamp` (ISO 8601; naive means UTC), `tags` (object with a
  non-empty string `name`; other values must be primitives — Conbench stringifies numbers and booleans, drops
  empty/null values and rejects lists/objects), `context` (object, part of the history fingerprint), `github`
  (required by current Conbench: `repository` must start with https://github.com, `commit` optional but non-empty,
  `pr_number`/`branch` optional), exactly one of `machine_info`/`cluster_info`, and `stats` or `error` (older
  servers reject both together). Optional: `run_name` (legacy, becomes run_tags.name), `run_reason`, `run_tags`,
  `info` (object; does not break history), `validation`, `change_annotations`, `optional_benchmark_info`
  (deprecated).
- `stats`: `data` (list of numbers or null, one per repetition; any null marks the result failed) and `unit`
  (one of `s`, `ns`, `B/s`, `i/s`; `b/s` is rewritten) required; `times`, `time_unit`, `iterations` and the
  aggregates (`min`, `max`, `mean`, `median`, `stdev`, `q1`, `q3`, `iqr`) optional — the server computes the
  aggregates. With two or more values, `iterations` must equal `len(data)`. Older servers require `times`,
  `time_unit` and `iterations` too, so they are always sent.
- `machine_info`: all of `name`, `architecture_name`, `kernel_name`, `os_name`, `os_version`, `cpu_model_name`
  (strings), `cpu_l1d_cache_bytes`, `cpu_l1i_cache_bytes`, `cpu_l2_cache_bytes`, `cpu_l3_cache_bytes`,
  `cpu_core_count`, `cpu_thread_count`, `cpu_frequency_max_hz` (lower-case "hz"), `memory_bytes`, `gpu_count`
  (integers ≥ 0, numeric strings accepted) and `gpu_product_names` (list of strings). Conbench identifies hardware
  by name + cores + threads + memory only, so colbench also puts its machine fingerprint in `context`: Conbench's
  history then never mixes two machines colbench tells apart.

The mapping: one colbench record (one worker process of one case) → one BenchmarkResult whose `stats.data` are the
process's timed iterations in seconds; `batch_id` groups the processes of a case in a run; `context` holds what
changes performance and is constant over history (language, engine, environment, machine fingerprint); `info`
holds versions and colbench ids. Error records carry `error` (the colbench error object) and no `stats`.
colbench does not record the CPU's maximum frequency or GPUs: those are sent as 0 / [] (Conbench's own examples use
0 for unknown).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

from colbench.paths import colbench_home
from colbench.redact import redact
from colbench.runtimes import RUNTIMES
from colbench.store.base import StoreError

KNOWN_UNITS = ("s", "ns", "B/s", "i/s")

def _language(name: str) -> str:
    return RUNTIMES[name].display if name in RUNTIMES else name


_INT = {"anyOf": [{"type": "integer", "minimum": 0}, {"type": "string", "pattern": "^[0-9]+$"}]}
_NUMBER_OR_NULL = {"type": ["number", "null"]}

#: Conbench's BenchmarkResult create schema, transcribed to JSON Schema 2020-12 from the marshmallow schemas above.
#: Two rules are not expressible here and are checked by `problems()`: `iterations == len(data)` when there are
#: two or more values, and a timestamp that parses as ISO 8601.
BENCHMARK_RESULT_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "Conbench BenchmarkResult (POST /api/benchmark-results/)",
    "type": "object",
    "required": ["run_id", "batch_id", "timestamp", "tags", "context", "github"],
    "additionalProperties": False,
    "properties": {
        "run_id": {"type": "string", "minLength": 1},
        "run_name": {"type": "string"},
        "run_reason": {"type": "string"},
        "run_tags": {"type": "object", "propertyNames": {"minLength": 1}, "additionalProperties": {"type": "string"}},
        "batch_id": {"type": "string"},
        "timestamp": {"type": "string", "format": "date-time"},
        "tags": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string", "minLength": 1}},
            "propertyNames": {"minLength": 1},
            "additionalProperties": {"type": ["string", "number", "boolean", "null"]},
        },
        "context": {"type": "object"},
        "info": {"type": "object"},
        "optional_benchmark_info": {"type": "object"},
        "validation": {"type": "object"},
        "change_annotations": {"type": "object"},
        "error": {"type": "object"},
        "machine_info": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "architecture_name", "kernel_name", "os_name", "os_version", "cpu_model_name",
                         "cpu_l1d_cache_bytes", "cpu_l1i_cache_bytes", "cpu_l2_cache_bytes", "cpu_l3_cache_bytes",
                         "cpu_core_count", "cpu_thread_count", "cpu_frequency_max_hz", "memory_bytes", "gpu_count",
                         "gpu_product_names"],
            "properties": {
                **{k: {"type": "string"} for k in ("name", "architecture_name", "kernel_name", "os_name",
                                                    "os_version", "cpu_model_name")},
                **{k: _INT for k in ("cpu_l1d_cache_bytes", "cpu_l1i_cache_bytes", "cpu_l2_cache_bytes",
                                     "cpu_l3_cache_bytes", "cpu_core_count", "cpu_thread_count",
                                     "cpu_frequency_max_hz", "memory_bytes", "gpu_count")},
                "gpu_product_names": {"type": "array", "items": {"type": "string"}},
            },
        },
        "cluster_info": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "info", "optional_info"],
            "properties": {"name": {"type": "string"}, "info": {"type": "object"},
                           "optional_info": {"type": "object"}},
        },
        "stats": {
            "type": "object",
            "additionalProperties": False,
            "required": ["data", "unit"],
            "properties": {
                "data": {"type": "array", "items": _NUMBER_OR_NULL},
                "times": {"type": "array", "items": _NUMBER_OR_NULL},
                "unit": {"enum": [*KNOWN_UNITS, "b/s"]},
                "time_unit": {"type": "string"},
                "iterations": {"type": "integer"},
                **{k: {"type": "number"} for k in ("min", "max", "mean", "median", "stdev", "q1", "q3", "iqr")},
            },
        },
        "github": {
            "type": "object",
            "additionalProperties": False,
            "required": ["repository"],
            "properties": {
                "repository": {"type": "string", "pattern": r"^(https://github\.com|git@github\.com:)"},
                "commit": {"type": "string", "minLength": 1},
                "pr_number": {"type": ["integer", "string", "null"]},
                "branch": {"type": ["string", "null"]},
            },
        },
    },
    "allOf": [
        {"oneOf": [{"required": ["machine_info"]}, {"required": ["cluster_info"]}]},
        {"anyOf": [{"required": ["stats"]}, {"required": ["error"]}]},
    ],
}


class ConbenchError(StoreError):
    """Publishing to Conbench failed: unreachable server, refused login, rejected document."""


# -- the mapping -------------------------------------------------------------------------------------------------


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


def _tag_value(value: Any) -> Any:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return json.dumps(value, sort_keys=True, default=str)  # Conbench refuses lists and objects as tag values


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


def to_conbench(result: Mapping[str, Any], run: Mapping[str, Any] | None = None, *,
                repository: str | None = None, run_reason: str | None = None) -> dict[str, Any]:
    """One colbench result record as a Conbench BenchmarkResult. `repository` (https://github.com/org/repo) is
    needed by current Conbench servers; without it (and without a GitHub URL in the record's commit, or
    $CONBENCH_PROJECT_REPOSITORY) the document has no `github` and `publish` refuses it."""
    run = run or {}
    commit = result.get("commit") or run.get("commit") or {}
    runtime = result.get("runtime") or {}
    language = str(runtime.get("name") or "python")
    versions = result.get("versions") or {}
    env = result.get("env") or {}
    context: dict[str, Any] = {
        "benchmark_language": _language(language),
        "engine": result.get("engine"),
        "env_name": result.get("env_name"),
        "colbench_machine_id": result.get("machine_id"),
    }
    if env.get("key"):
        context["env_key"] = env["key"]
    info: dict[str, Any] = {
        "benchmark_language_version": f"{_language(language)} {runtime.get('version', '')}".strip(),
        **{f"{lib}_version": str(version) for lib, version in sorted(versions.items()) if lib != "python"},
        "colbench_result_id": result["result_id"],
        "colbench_case_id": result["case_id"],
        "colbench_schema_version": str(result.get("schema_version")),
        "process_index": str(result.get("process_index")),
        "warmup_iterations": str(result.get("warmup")),
        "cache": str((result.get("cache") or {}).get("achieved") or (result.get("cache") or {}).get("requested")),
    }
    if commit.get("dirty"):
        info["commit_dirty"] = "true"
    doc: dict[str, Any] = {
        "run_id": result["run_id"],
        "batch_id": f"{result['run_id']}-{result['case_id']}",
        "timestamp": result["timestamp"],
        "tags": {k: _tag_value(v) for k, v in (result.get("tags") or
                                              {"name": result["benchmark"], **result["params"]}).items()},
        "context": {k: v for k, v in context.items() if v is not None},
        "info": info,
        "machine_info": conbench_machine(result.get("machine") or run.get("machine") or {}),
    }
    name = result.get("run_name") or run.get("name")
    if name:
        doc["run_name"] = str(name)
    if run_reason:
        doc["run_reason"] = run_reason
    repo = github_repository(repository) or github_repository(commit.get("repository")) or \
        github_repository(os.environ.get("CONBENCH_PROJECT_REPOSITORY"))
    if repo:
        doc["github"] = {"repository": repo, **({"commit": str(commit["sha"])} if commit.get("sha") else {})}
    wall = [v if isinstance(v, int | float) and math.isfinite(v) else None
            for v in (result.get("samples") or {}).get("wall_s") or []]
    if result.get("status") == "ok" and wall:
        doc["stats"] = {"data": wall, "unit": "s", "times": wall, "time_unit": "s", "iterations": len(wall)}
    else:
        error = dict(result.get("error") or {})
        if result.get("status") == "ok" and "wall" not in (result.get("measure") or {}).get("metrics", ["wall"]):
            error = {"kind": "no-wall-time", "message": "only instructions were counted (run --measure "
                     "instructions); Conbench receives wall times"}
        error.setdefault("kind", "no-samples" if result.get("status") == "ok" else "error")
        doc["error"] = {k: v for k, v in error.items() if v is not None}
    return doc


def problems(doc: Mapping[str, Any]) -> list[str]:
    """What a Conbench server would refuse in `doc`, beyond the JSON schema's reach (and what publish needs)."""
    found = []
    if "github" not in doc:
        found.append("no GitHub repository: pass --github-repository https://github.com/ORG/REPO "
                     "(or set CONBENCH_PROJECT_REPOSITORY)")
    data = (doc.get("stats") or {}).get("data") or []
    if len(data) >= 2 and doc["stats"].get("iterations") != len(data):
        found.append(f"iterations ({doc['stats'].get('iterations')}) do not match the sample count ({len(data)})")
    try:
        from datetime import datetime

        datetime.fromisoformat(str(doc.get("timestamp")).replace("Z", "+00:00"))
    except ValueError:
        found.append(f"timestamp {doc.get('timestamp')!r} is not ISO 8601")
    return found


def export_documents(results: Iterable[Mapping[str, Any]], runs: Mapping[str, Mapping[str, Any]], output: Path, *,
                     repository: str | None = None, run_reason: str | None = None) -> int:
    """Write the Conbench documents of `results` to `output`: a JSON array, or JSON Lines for a `.jsonl` name."""
    docs = [to_conbench(r, runs.get(r["run_id"]), repository=repository, run_reason=run_reason) for r in results]
    output.parent.mkdir(parents=True, exist_ok=True)
    if output.suffix == ".jsonl":
        output.write_text("".join(json.dumps(d) + "\n" for d in docs))
    else:
        output.write_text(json.dumps(docs, indent=1) + "\n")
    return len(docs)


# -- the client --------------------------------------------------------------------------------------------------


class ConbenchSession:
    """A logged-in conversation with one Conbench server (urllib with a cookie jar: no extra dependency)."""

    def __init__(self, url: str, *, email: str | None = None, password: str | None = None,
                 timeout_s: float = 30.0) -> None:
        if not re.match(r"^https?://[^/\s]+", url or ""):
            raise ConbenchError(f"--conbench {redact(url or '')!r}: give the server's http(s):// URL, "
                                "e.g. https://conbench.example.org")
        if "@" in url.split("://", 1)[1].split("/", 1)[0]:
            raise ConbenchError(f"--conbench {redact(url)}: put the login in $CONBENCH_EMAIL and $CONBENCH_PASSWORD, "
                                "not in the URL")
        self.url = url.rstrip("/")
        self.shown_url = redact(self.url)  # what messages say: never a password given in the URL
        self.email = email if email is not None else os.environ.get("CONBENCH_EMAIL")
        self.password = password if password is not None else os.environ.get("CONBENCH_PASSWORD")
        self.timeout_s = timeout_s
        self._opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        self.logged_in = False

    def _request(self, path: str, body: Mapping[str, Any]) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path, data=json.dumps(body).encode(), method="POST",
                                         headers={"Content-Type": "application/json", "Accept": "application/json"})
        for attempt in range(3):
            try:
                with self._opener.open(request, timeout=self.timeout_s) as response:
                    return response.status, response.read()
            except urllib.error.HTTPError as exc:
                if exc.code >= 500 and attempt < 2:
                    time.sleep(0.5 * 2 ** attempt)
                    continue
                return exc.code, exc.read()
            except ValueError as exc:  # http.client.InvalidURL: a port that is not a number …
                raise ConbenchError(f"--conbench {self.shown_url}: {redact(str(exc))}") from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt < 2 and not isinstance(getattr(exc, "reason", None), ConnectionRefusedError):
                    time.sleep(0.5 * 2 ** attempt)
                    continue
                reason = getattr(exc, "reason", exc)
                raise ConbenchError(f"cannot reach Conbench at {self.shown_url}: {reason}") from None
        raise AssertionError("unreachable")

    def login(self) -> None:
        if not (self.email and self.password):
            return  # try without: the server says 401 if it needs a login, and post() explains
        status, body = self._request("/api/login/", {"email": self.email, "password": self.password})
        if status not in (200, 204):
            raise ConbenchError(f"Conbench at {self.shown_url} refused the login of {self.email} (HTTP {status}"
                                f"{_reason(body)}): check CONBENCH_EMAIL and CONBENCH_PASSWORD")
        self.logged_in = True

    def post_result(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        status, body = self._request("/api/benchmark-results/", doc)
        if status == 401:
            hint = "the login was not accepted" if self.logged_in else "set CONBENCH_EMAIL and CONBENCH_PASSWORD"
            raise ConbenchError(f"Conbench at {self.shown_url} needs a login to take results (HTTP 401): {hint}")
        if status not in (200, 201):
            which = (doc.get("info") or {}).get("colbench_result_id")
            raise ConbenchError(f"Conbench at {self.shown_url} refused result {which} (HTTP {status}{_reason(body)})")
        try:
            return json.loads(body or b"{}")
        except ValueError:
            return {}


def _reason(body: bytes) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        text = body.decode(errors="replace").strip().splitlines()
        return f": {text[0][:200]}" if text else ""
    detail = parsed.get("description") or parsed.get("name") if isinstance(parsed, dict) else parsed
    return f": {json.dumps(detail)[:300]}" if detail else ""


class PublishLedger:
    """Result ids already posted to one Conbench server, so publishing again does not duplicate them there
    (Conbench gives each POST a new id)."""

    def __init__(self, url: str, root: Path | None = None) -> None:
        key = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
        self.path = (root or colbench_home() / "conbench") / f"{key}.published"
        self.posted: set[str] = set()
        if self.path.exists():
            self.posted = {line.strip() for line in self.path.read_text().splitlines() if line.strip()}

    def add(self, result_id: str) -> None:
        self.posted.add(result_id)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a") as handle:  # a torn last line never equals a result id: it is just ignored
            handle.write(result_id + "\n")
            handle.flush()
            os.fsync(handle.fileno())


@dataclass
class PublishReport:
    posted: int = 0
    skipped: int = 0
    ids: list[str] = field(default_factory=list)


def publish(results: Sequence[Mapping[str, Any]], runs: Mapping[str, Mapping[str, Any]], url: str,
            session: ConbenchSession | None = None, *, repository: str | None = None, run_reason: str | None = None,
            ledger: PublishLedger | None = None, force: bool = False) -> PublishReport:
    """Post `results` to the Conbench server at `url` (logging in with $CONBENCH_EMAIL/$CONBENCH_PASSWORD).
    Results the ledger says were posted before are skipped unless `force`. Every document is checked before the
    first is posted, so a bad one does not leave half a run published."""
    session = session or ConbenchSession(url)
    ledger = ledger if ledger is not None else PublishLedger(session.url)
    todo = [r for r in results if force or r["result_id"] not in ledger.posted]
    docs = [to_conbench(r, runs.get(r["run_id"]), repository=repository, run_reason=run_reason) for r in todo]
    for doc in docs:
        found = problems(doc)
        if found:
            raise ConbenchError(f"cannot publish result {doc['info']['colbench_result_id']}: {found[0]}")
    report = PublishReport(skipped=len(results) - len(todo))
    if not docs:
        return report
    session.login()
    for result, doc in zip(todo, docs, strict=True):
        answer = session.post_result(doc)
        ledger.add(result["result_id"])
        report.posted += 1
        if answer.get("id"):
            report.ids.append(str(answer["id"]))
    return report

"""`colbench serve`: a small read-only web app over the results store.

Pages (server-rendered, charts inlined as PNG data URIs, no script at all):
    /                                   what changed (the latest verdicts per benchmark, a small history chart
                                        per case with its change points: report/overview.py), then the runs,
                                        newest first, and a form to compare two of them
    /runs/{run_id}                      one run: facts, checks, tables, plots, errors, its environments compared
    /compare?baseline=R1&contender=R2   verdicts with intervals (optional baseline_env / contender_env;
                                        &metric=instructions compares instruction counts instead of times,
                                        &metric=memory peak RSS, with who owns the peak where memory
                                        profiles were kept: report/explain_memory_view.py)
    /history?benchmark=B&case=C         a case over time with change points; &machine=M filters by machine,
                                        &metric=instructions shows instruction counts

Read-only: it only calls the store's query methods, whose SQL is fixed and parameterised. Request values are
checked before use: run ids and machine ids against the store's own lists, environment names against the
run's, benchmark and case ids against strict patterns. Unknown things are a 404, malformed ones a 400.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections import defaultdict
from collections.abc import Callable
from statistics import median
from typing import Any, TypedDict

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from colbench.model.metrics import SERIES_METRICS
from colbench.model.records import Result, Run
from colbench.render.figures import Plot
from colbench.report.compare_page import run_compare
from colbench.report.history_page import HistoryView, case_history
from colbench.report.overview import RECENT_RUNS, Overview, build_overview, deciding_metric_of
from colbench.report.plots_history import history_figure
from colbench.report.run_page import build_run_view
from colbench.report.templating import render
from colbench.report.watch_view import timelines
from colbench.store import open_store
from colbench.store.base import ResultQuery, Store

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'"
HEADERS = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
           "Cache-Control": "no-store"}
BENCHMARK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}")
CASE = re.compile(r"[0-9a-f]{4,64}")
METRICS = SERIES_METRICS  # the per-iteration metrics: time, instructions
#: what two runs are compared on: the per-iteration metrics, and peak RSS (its flame graph: who owns the peak)
COMPARE_METRICS = (*SERIES_METRICS, "memory")


class HistoryFilters(TypedDict):
    """What every history page shows in its form: the machines to filter by and the values picked."""

    machines: dict[str, str]  # machine id → name
    machine: str
    benchmark: str
    case: str
    metric: str
    metrics: tuple[str, ...]


def create_app(store: Store | str) -> Starlette:
    """The dashboard over a store (or a store URL; the store must exist)."""
    db = open_store(store, create=False) if isinstance(store, str) else store
    threading.Thread(target=_warm_up, name="colbench-warm-up", daemon=True).start()
    pages = _Pages(db)
    lock = threading.Lock()  # one request at a time renders: matplotlib text caches are not thread-safe

    def locked(handler: Callable[[Request], Response]) -> Callable[[Request], Response]:
        def wrapper(request: Request) -> Response:
            with lock:
                return handler(request)
        return wrapper

    routes = [
        Route("/", locked(pages.runs_index)),
        Route("/runs/{run_id}", locked(pages.run_page)),
        Route("/compare", locked(pages.compare_page)),
        Route("/history", locked(pages.history_page)),
        Route("/watch", locked(pages.watch_page)),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: pages.error_page})


class _Pages:
    """The dashboard's pages over one store (and the front page's views, kept per store state)."""

    def __init__(self, db: Store) -> None:
        self.db = db
        self.overviews: dict[tuple[tuple[str, str, str], ...], Overview] = {}

    def page(self, template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = render(template, csp=CSP, store_url=self.db.url, **context)
        return HTMLResponse(html, status_code=status, headers=HEADERS)

    def runs(self) -> list[Run]:
        return [run.redacted() for run in self.db.list_runs()]  # records stored before redaction may hold secrets

    def runs_index(self, request: Request) -> Response:
        runs = self.runs()
        state = tuple((r.run_id, str(r.status), str(r.finished_at)) for r in runs[:RECENT_RUNS])
        if state not in self.overviews:  # a new run, or one that finished: what changed is worth working out again
            self.overviews.clear()
            self.overviews[state] = build_overview(self.db, runs)
        return self.page("dash_runs.html", runs=runs, choices=_run_choices(runs), overview=self.overviews[state])

    def run_page(self, request: Request) -> Response:
        runs = self.runs()
        run_id = _known_run(request.path_params["run_id"], runs)
        view = build_run_view(self.db, run_id, history=False, dashboard=True)
        return self.page("dash_run.html", view=view, choices=_run_choices(runs))

    def compare_page(self, request: Request) -> Response:
        runs = self.runs()
        query = request.query_params
        choices = _run_choices(runs)
        if not query.get("baseline"):
            return self.page("dash_compare.html", view=None, choices=choices, picked={}, envs={},
                             metrics=COMPARE_METRICS)
        envs = {r.run_id: [e.name for e in r.envs] for r in runs}
        baseline, contender, baseline_env, contender_env = _compared_sides(query, runs, envs)
        metric = _known_metric(query.get("metric"), COMPARE_METRICS) if query.get("metric") else \
            deciding_metric_of(self.db.results(ResultQuery(run_ids=(contender,), env_name=contender_env,
                                                           status="ok")))
        view = run_compare(self.db, baseline, contender, baseline_env, contender_env, metric=metric)
        picked = {"baseline": baseline, "contender": contender, "baseline_env": baseline_env or "",
                  "contender_env": contender_env or "", "metric": metric}
        return self.page("dash_compare.html", view=view, choices=choices, picked=picked, envs=envs,
                         metrics=COMPARE_METRICS)

    def history_page(self, request: Request) -> Response:
        runs = self.runs()
        query = request.query_params
        machines = {r.machine_id: (r.machine or {}).get("name", r.machine_id) for r in runs}
        machine = query.get("machine") or None
        if machine is not None and machine not in machines:
            raise HTTPException(404, f"no machine {machine!r} in this store")
        benchmark = _pattern(query.get("benchmark"), BENCHMARK, "benchmark")
        case = _pattern(query.get("case"), CASE, "case")
        metric = _known_metric(query.get("metric"))
        context = HistoryFilters(machines=machines, machine=machine or "", benchmark=benchmark or "",
                                 case=case or "", metric=metric, metrics=METRICS)
        if benchmark is None:
            recent = tuple(r.run_id for r in runs[:RECENT_RUNS])
            benchmarks = sorted({r.benchmark for r in self.db.results(ResultQuery(run_ids=recent))}) if recent else []
            return self.page("dash_history.html", benchmarks=benchmarks, cases=None, series=None, **context)
        if case is None:
            cases = self.cases(benchmark, machine)
            return self.page("dash_history.html", benchmarks=None, cases=cases, series=None, **context)
        views = self.case_series(benchmark, case, machine, metric)
        return self.page("dash_history.html", benchmarks=None, cases=None, series=views, **context)

    def cases(self, benchmark: str, machine: str | None) -> list[CaseRow]:
        cases = _case_index(self.db.results(ResultQuery(benchmark=benchmark, machine_id=machine, status="ok")))
        if not cases:
            raise HTTPException(404, f"no results of benchmark {benchmark!r}"
                                + (f" on machine {machine}" if machine else ""))
        return cases

    def case_series(self, benchmark: str, case: str, machine: str | None, metric: str) -> list[HistoryView]:
        found = case_history(self.db, benchmark, case, machine, metric=metric)
        if not found:
            raise HTTPException(404, f"no results of case {case} of {benchmark!r}"
                                + (f" on machine {machine}" if machine else "")
                                + (f" with {metric} measured" if metric != "time" else ""))
        views = []
        for series in found:
            figure = history_figure(series)
            views.append(HistoryView(series, Plot(f"history-{series.case_id}", series.label, figure)
                                     if figure is not None else None))
        return views

    def watch_page(self, request: Request) -> Response:
        return self.page("dash_watch.html", watches=timelines(self.db))

    def error_page(self, request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        detail = exc.detail if isinstance(exc, HTTPException) else "internal error"
        return self.page("dash_error.html", status=status, code=status, message=detail)


def _compared_sides(query: Any, runs: list[Run], envs: dict[str, list[str]]
                    ) -> tuple[str, str, str | None, str | None]:
    """The compare form's baseline and contender (runs and environments), checked; one run alone means its first
    two environments."""
    baseline = _known_run(query["baseline"], runs)
    contender = _known_run(query.get("contender") or baseline, runs)
    baseline_env = _known_env(query.get("baseline_env"), envs[baseline])
    contender_env = _known_env(query.get("contender_env"), envs[contender])
    if baseline == contender and baseline_env == contender_env:
        if baseline_env is None and len(envs[baseline]) > 1:
            baseline_env, contender_env = envs[baseline][0], envs[baseline][1]
        else:
            raise HTTPException(400, "pick two different runs, or two environments of one run")
    return baseline, contender, baseline_env, contender_env


def _warm_up() -> None:
    """Import the statistics (scipy) in the background, so the first compare page does not wait for it."""
    import importlib

    for module in ("colbench.analysis.verdicts", "colbench.analysis.changepoint"):
        with contextlib.suppress(ImportError):
            importlib.import_module(module)


def _known_metric(value: str | None, known: tuple[str, ...] = METRICS) -> str:
    if not value:
        return "time"
    if value not in known:
        raise HTTPException(400, f"unknown metric: choose {' or '.join(known)}")
    return value


def _known_run(value: str, runs: list[Run]) -> str:
    """The run id if the store has exactly that run, else a 404 (never looked up by prefix or name here)."""
    for run in runs:
        if run.run_id == value:
            return value
    raise HTTPException(404, f"no run {value!r} in this store")


def _known_env(value: str | None, envs: list[str]) -> str | None:
    if not value:
        return None
    if value not in envs:
        raise HTTPException(404, f"no environment {value!r} in that run")
    return value


def _pattern(value: str | None, pattern: re.Pattern[str], name: str) -> str | None:
    if not value:
        return None
    if not pattern.fullmatch(value):
        raise HTTPException(400, f"malformed {name} parameter")
    return value


def _run_choices(runs: list[Run]) -> list[tuple[str, str]]:
    return [(r.run_id, f"{r.run_id}" + (f" ({r.name})" if r.name else "") + f" — {(r.machine or {}).get('name', '')}")
            for r in runs]


class CaseRow(TypedDict):
    """A case in the history index of a benchmark."""

    case_id: str
    benchmark: str
    params: str  # the params that differ from the framework's defaults, as `name=value` words
    runs: int
    last: float | None  # the latest run's median time (of its processes' medians)


def _case_index(results: list[Result]) -> list[CaseRow]:
    """One row per case of a benchmark: its params, how many runs, the latest median."""
    by_case: dict[str, list[Result]] = defaultdict(list)
    for r in results:
        by_case[r.case_id].append(r)
    rows: list[CaseRow] = []
    for case_id, members in by_case.items():
        last_run = members[-1].run_id
        medians = [m for r in members if r.run_id == last_run if (m := r.median()) is not None]
        params = members[-1].params
        rows.append({"case_id": case_id, "benchmark": members[-1].benchmark,
                     "params": " ".join(f"{k}={v}" for k, v in params.items()
                                        if (k, v) not in (("allocator", "default"), ("cache", "warm"))),
                     "runs": len({r.run_id for r in members}), "last": median(medians) if medians else None})
    return sorted(rows, key=lambda row: row["params"])

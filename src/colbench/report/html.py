"""The report of one or more runs: a self-contained `index.html` with its plots, or Markdown (report/markdown.py).
Its sections are the views the dashboard's pages show too: report/run_page.py, compare_page.py, history_page.py.

Self-contained means: every plot inlined as a PNG data URI, CSS inline, no script, no font or other
resource fetched; a Content-Security-Policy of `default-src 'none'` makes the browser refuse anything else.
Every value from the store goes through Jinja2's autoescaping (error messages and stderr tails included).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from colbench.paths import inside, owned_dir, write_text
from colbench.report.compare_page import CompareView, cross_run_compares
from colbench.report.markdown import render_markdown
from colbench.report.run_page import RunView, build_run_view
from colbench.report.templating import render
from colbench.report.watch_view import WatchTimeline, timelines
from colbench.store.base import Store


def render_report_html(views: Sequence[RunView], compares: Sequence[CompareView] = (),
                       files: dict[str, dict[str, tuple[str, str]]] | None = None,
                       watches: Sequence[WatchTimeline] = ()) -> str:
    return render("report.html", views=views, compares=compares, files=files or {}, watches=watches,
                  generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"))


def write_report(store: Store, run_ids: Sequence[str], output: Path, *, fmt: str = "html",
                 baseline_id: str | None = None, history: bool = True,
                 metrics: Sequence[str] | None = None) -> list[Path]:
    """Write the report of the runs (exact ids) into `output`; returns the files written.

    html: `index.html` plus `<plot>.png`/`.svg` (in `<run id>/` when there are several runs); markdown:
    `report.md` only. Compare sections: each run against `baseline_id` when given, else every run after the
    first against the first; plus the environments of a run with several. Compares and histories are of
    `metrics` ("time", "instructions"; default: every one the runs measured).
    """
    if fmt not in ("html", "markdown"):
        raise ValueError(f"unknown report format {fmt!r}")
    html = fmt == "html"
    views = [build_run_view(store, run_id, plots=html, history=history, metrics=metrics) for run_id in run_ids]
    compares = cross_run_compares(store, run_ids, baseline_id, with_plot=html, metrics=metrics)
    watched = [view.run.watch["id"] for view in views if view.run.watch]
    watches = timelines(store, watched) if watched else []
    # the output directory is the user's; below it, every level is checked (colbench.paths): a run's folder or a
    # file there that is a link leading out of it is refused, never written through
    owned_dir(output, "report directory", output)
    if not html:
        path = write_text(output / "report.md", render_markdown(views, compares, watches), "report", output)
        return [path]
    written: list[Path] = []
    files: dict[str, dict[str, tuple[str, str]]] = {}
    for view in views:
        # a run id read from a store (perhaps copied from elsewhere) becomes a directory: it must stay in `output`
        directory = inside(output, view.run.run_id, what="run id") if len(views) > 1 else output
        for plot in [*view.plots, *([view.claims_plot] if view.claims_plot else [])]:
            png, svg = plot.save(directory, root=output)
            written += [png, svg]
            files.setdefault(view.run.run_id, {})[plot.key] = (str(png.relative_to(output)),
                                                                  str(svg.relative_to(output)))
    index = write_text(output / "index.html", render_report_html(views, compares, files, watches), "report", output)
    return [index, *written]

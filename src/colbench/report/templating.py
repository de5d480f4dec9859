"""How the report's and the dashboard's pages are rendered: the Jinja2 templates (autoescaped, every value printed as
document text), their filters, and the names pages give their plots."""

from __future__ import annotations

import functools
import math
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

import colbench
from colbench.redact import document_text
from colbench.render.fmt import fmt_bytes, fmt_measured, fmt_seconds
from colbench.report.plots_compare import VERDICT_CLASSES
from colbench.report.plots_history import MIN_RUNS

TEMPLATES = Path(__file__).parent / "templates"
REPORT_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def ratio_text(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.3f}"


def percent_text(value: float | None) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:+.1%}"


def level_text(value: float | None) -> str:
    return "" if value is None else f"{value * 100:.4g}%"


def metric_title(name: str) -> str:
    """What a view's title adds for a metric other than time: ' — instructions'."""
    return "" if name == "time" else f" — {name}"


def _document_value(value: Any) -> Any:
    """Every value a template prints, before it is escaped: control characters (ESC, BEL, NUL … from a profiled
    function's name, a shared store's run name, a parameter) replaced by U+FFFD, as in the SVG flame graphs. Markup
    (an SVG drawn here) stays markup."""
    if isinstance(value, markupsafe.Markup):
        return markupsafe.Markup(document_text(str(value)))
    if isinstance(value, str):
        return document_text(value)
    return value


@functools.cache
def environment() -> jinja2.Environment:
    """The templates of the report and the dashboard: autoescaped, and every printed value is document text
    (`_document_value`), whichever field it comes from."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                             autoescape=jinja2.select_autoescape(("html",), default_for_string=True),
                             trim_blocks=True, lstrip_blocks=True, finalize=_document_value)
    env.filters.update(seconds=fmt_seconds, ratio=ratio_text, pct=percent_text, level=level_text, bytes=fmt_bytes,
                       measured=fmt_measured)
    env.globals.update(colbench_version=colbench.__version__, min_runs=MIN_RUNS,
                       verdict_css=lambda v: VERDICT_CLASSES.get(v, ""))
    return env


def render(template: str, **context: Any) -> str:
    context.setdefault("csp", REPORT_CSP)
    return environment().get_template(template).render(**context)

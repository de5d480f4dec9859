"""Plots of a run's results, chosen from what the benchmarks measured.

Each reference experiment draws the plots of its post (its home under colbench.experiments declares them) from
the cases that measured time; any other benchmark, and every benchmark of a run with several environments, gets
`generic_plot`: the median per case with interquartile error bars, faceted by the params that vary, one colour
per environment, of each metric the run measured (time, instructions). A metric that was not measured draws no
plot.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.registry import plot_specs
from colbench.model.metrics import metric_or_none, series_of
from colbench.model.records import Run, Stats
from colbench.render.figures import (
    PALETTE,
    Plot,
    count_unit,
    error_bar,
    facet_param,
    fixed_params_note,
    fmt_time,
    new_figure,
    ordered,
    plain_log,
    styled,
    time_unit,
    title,
    wide_range,
    wrap_label,
)
from colbench.render.fmt import fmt_instructions, measured_metrics, params_label, slug, varying_params


def _stats(summary: CaseSummary | None, metric: str) -> Stats | None:
    if summary is None or not summary.ok:
        return None
    series = series_of(metric)
    return summary.wall if series == "wall_s" else summary.metrics.get(series)


def _median(summary: CaseSummary | None, metric: str) -> float | None:
    stats = _stats(summary, metric)
    value = stats.get("median") if stats else None
    return float(value) if isinstance(value, int | float) else None


def _measured(summary: CaseSummary, metric: str) -> bool:
    return bool((_stats(summary, metric) or {}).get("n"))


@styled
def generic_plot(summaries: Sequence[CaseSummary], run: Run, metric: str = "time") -> Figure | None:
    """Median `metric` per case (horizontal bars, IQR error bars), one panel per value of a telling param, one
    colour per environment; None when no case measured the metric."""
    ok = [s for s in summaries if s.ok and _measured(s, metric)]
    if not ok:
        return None
    counts = metric == "instructions"
    layout = _Layout.of(ok, run)
    highs = [(_stats(s, metric) or {}).get("q3") or _median(s, metric) for s in ok]
    scale, unit = count_unit([h or 0.0 for h in highs]) if counts else time_unit(highs)
    log = wide_range([_median(s, metric) for s in ok])
    fig, axes = new_figure(len(layout.facets), 1, panel_height=0.5 + 0.24 * layout.tallest())
    for row, (value, labels) in enumerate(zip(layout.facets, layout.labels_per_facet, strict=True)):
        ax = axes[row][0]
        _draw_bars(ax, ok, layout, value, labels, metric, scale)
        _label_panel(ax, layout, value, labels, f"median {_per_iteration(metric)} ({unit}); bars: interquartile range",
                     log=log)
    envs = layout.envs
    if len(envs) > 1:
        fig.legend(loc="outside lower center", ncols=min(len(envs), 4), title="environment")
    by = ", by environment" if len(envs) > 1 else ""
    title(fig, f"{layout.benchmark}: median {'instructions' if counts else 'time'} per case{by}",
          fixed_params_note(ok, layout.varying))
    return fig


@dataclass
class _Layout:
    """How generic_plot lays the cases out: the param that tells them apart most (a panel per value), the others
    naming the bars (a lone case's bar is named by the benchmark), an environment a colour."""

    benchmark: str
    varying: list[str]
    facet: str | None
    bar_params: list[str]
    facets: list[Any]
    envs: list[str]
    labels_per_facet: list[list[str]] = field(default_factory=list)

    @classmethod
    def of(cls, ok: Sequence[CaseSummary], run: Run) -> _Layout:
        benchmark = ok[0].benchmark
        # what tells the cases apart; the rest goes to the subtitle (a lone case: all of it, its bar named by the
        # benchmark)
        varying = [name for name in varying_params(ok).get(benchmark, [])
                   if len({repr(s.params.get(name)) for s in ok}) > 1]
        facet = facet_param(ok, varying)
        layout = cls(benchmark, varying, facet, [v for v in varying if v != facet],
                     ordered([s.params.get(facet) for s in ok]) if facet else [None],
                     ordered([s.env_name for s in ok], run.env_names))
        layout.labels_per_facet = [ordered([layout.label(s) for s in ok if layout.in_panel(s, f)])
                                   for f in layout.facets]
        return layout

    def tallest(self) -> int:
        """The most bar rows a panel needs: its labels, each as tall as its lines or its environments' bars."""
        lines = max(wrap_label(label).count("\n") + 1 for labels in self.labels_per_facet for label in labels)
        return max(len(labels) for labels in self.labels_per_facet) * max(len(self.envs), lines)

    def label(self, summary: CaseSummary) -> str:
        return params_label(summary, self.bar_params) if self.bar_params else self.benchmark

    def in_panel(self, summary: CaseSummary, value: Any) -> bool:
        return self.facet is None or summary.params.get(self.facet) == value


def _per_iteration(metric: str) -> str:
    return "instructions per iteration" if metric == "instructions" else "wall time per iteration"


def _label_panel(ax: Axes, layout: _Layout, value: Any, labels: list[str], xlabel: str, *, log: bool) -> None:
    ax.set_yticks(range(len(labels)), [wrap_label(label) for label in labels])
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    if log:
        ax.set_xscale("log")
        plain_log(ax.xaxis)
    ax.margins(x=0.18)
    if layout.facet is not None:
        ax.set_title(f"{layout.facet} = {value}", loc="left")


def _draw_bars(ax: Axes, ok: Sequence[CaseSummary], layout: _Layout, value: Any, labels: list[str], metric: str,
               scale: float) -> None:
    """One panel's bars: per case label, a bar per environment with its interquartile range."""
    envs = layout.envs
    show = fmt_instructions if metric == "instructions" else fmt_time
    height = 0.8 / len(envs)
    for e, env in enumerate(envs):
        members = {layout.label(s): s for s in ok if s.env_name == env and layout.in_panel(s, value)}
        ys = [i + (e - (len(envs) - 1) / 2) * height for i in range(len(labels))]
        widths = [(_median(members.get(label), metric) or 0.0) / scale for label in labels]
        errors = list(zip(*[error_bar(_stats(members.get(label), metric), scale) for label in labels],
                          strict=True))
        bars = ax.barh(ys, widths, height=height * 0.9, color=PALETTE[e % len(PALETTE)],
                       xerr=errors, error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333333"},
                       label=env if len(envs) > 1 else None)
        ax.bar_label(bars, labels=[(show(_median(members.get(label), metric)) or "") if label in members
                                   else "" for label in labels], padding=4, fontsize=7)


CAPTIONS = {
    "time": "Median wall time of every timed iteration of every process; error bars span the interquartile range "
            "of those samples.",
    "instructions": "Median instructions of the timed call per iteration (counted under Valgrind's callgrind); "
                    "error bars span the interquartile range.",
}


def _caption(name: str) -> str:
    """The plot's caption: its own, or the registry's words for a benchmark's own metric (an asv mem_ value)."""
    known = metric_or_none(name)
    return CAPTIONS.get(name) or (f"Median per iteration of the {known.measured if known else name}; error bars "
                                  "span the interquartile range.")


def make_plots(summaries: Sequence[CaseSummary], run: Run) -> list[Plot]:
    """Every plot the results call for. One environment: each experiment's own plots of the cases that measured
    time, then the generic plot for every benchmark they do not cover, of each metric measured. Several
    environments: one generic plot per benchmark and metric that compares them (a colour each), never a set of
    plots per environment."""
    plots: list[Plot] = []
    envs = ordered([s.env_name for s in summaries], run.env_names)
    timed = [s for s in summaries if _measured(s, "time")]
    covered: set[str] = set()
    if len(envs) == 1:
        for spec in plot_specs():
            try:
                figure = spec.function(timed, run)
            except Exception as exc:  # one odd result must not cost the whole report: fall back, and say so
                warnings.warn(f"plot {spec.key} failed ({exc!r}); its benchmarks get the generic plot",
                              RuntimeWarning, stacklevel=2)
                continue
            if figure is not None:
                plots.append(Plot(spec.key, spec.title, figure, spec.caption))
                covered.update(spec.benchmarks)
    several = " One bar per environment." if len(envs) > 1 else ""
    for metric in measured_metrics(summaries):
        for benchmark in ordered([s.benchmark for s in summaries]):
            if metric == "time" and benchmark in covered:
                continue
            figure = generic_plot([s for s in summaries if s.benchmark == benchmark], run, metric)
            if figure is not None:
                what = "time" if metric == "time" else metric
                plots.append(Plot(f"{slug(benchmark)}-{what}", f"{benchmark}: median {what} per case", figure,
                                  _caption(metric) + several))
    return plots

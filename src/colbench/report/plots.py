"""Plots of a run's results, chosen from what the benchmarks measured.

Each reference experiment draws the plots of its post (its home under colbench.experiments declares them); any
other benchmark gets `generic_plot`: median time per case with interquartile error bars, faceted by the params
that vary.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

from matplotlib.figure import Figure

from colbench.analysis.aggregate import CaseSummary
from colbench.experiments.registry import plot_specs
from colbench.model.records import Run
from colbench.render.figures import (
    PALETTE,
    Plot,
    error_bar,
    facet_param,
    fixed_params_note,
    fmt_time,
    median,
    new_figure,
    ordered,
    plain_log,
    styled,
    time_unit,
    title,
    wide_range,
)
from colbench.render.fmt import params_label, varying_params


@styled
def generic_plot(summaries: Sequence[CaseSummary], run: Run) -> Figure | None:
    """Median wall time per case (horizontal bars, IQR error bars), one panel per value of a telling param,
    one colour per environment."""
    ok = [s for s in summaries if s.ok]
    if not ok:
        return None
    benchmark = ok[0].benchmark
    varying = varying_params(ok).get(benchmark, [])
    facet = facet_param(ok, varying)
    bar_params = [v for v in varying if v != facet]
    facets = ordered([s.params.get(facet) for s in ok]) if facet else [None]
    envs = ordered([s.env_name for s in ok], run.env_names)
    labels_per_facet = [ordered([params_label(s, bar_params) for s in ok if facet is None or s.params.get(facet) == f])
                        for f in facets]
    tallest = max(len(labels) for labels in labels_per_facet) * len(envs)
    scale, unit = time_unit([s.wall.get("q3") or median(s) for s in ok])
    log = wide_range([median(s) for s in ok])
    fig, axes = new_figure(len(facets), 1, panel_height=0.35 + 0.24 * tallest)
    height = 0.8 / len(envs)
    for row, (value, labels) in enumerate(zip(facets, labels_per_facet, strict=True)):
        ax = axes[row][0]
        for e, env in enumerate(envs):
            members = {params_label(s, bar_params): s for s in ok
                       if s.env_name == env and (facet is None or s.params.get(facet) == value)}
            ys = [i + (e - (len(envs) - 1) / 2) * height for i in range(len(labels))]
            widths = [(median(members.get(label)) or 0.0) / scale for label in labels]
            errors = list(zip(*[error_bar(members[label].wall, scale) if label in members else (0.0, 0.0)
                                for label in labels], strict=True))
            bars = ax.barh(ys, widths, height=height * 0.9, color=PALETTE[e % len(PALETTE)],
                           xerr=errors, error_kw={"elinewidth": 0.8, "capsize": 2, "ecolor": "#333333"},
                           label=env if len(envs) > 1 else None)
            ax.bar_label(bars, labels=[fmt_time(median(members.get(label))) for label in labels],
                         padding=4, fontsize=7)
        ax.set_yticks(range(len(labels)), labels)
        ax.invert_yaxis()
        ax.set_xlabel(f"median wall time per iteration ({unit}); bars: interquartile range")
        if log:
            ax.set_xscale("log")
            plain_log(ax.xaxis)
        ax.margins(x=0.18)
        if facet is not None:
            ax.set_title(f"{facet} = {value}", loc="left")
    if len(envs) > 1:
        fig.legend(loc="outside lower center", ncols=min(len(envs), 4), title="environment")
    title(fig, f"{benchmark}: median time per case", fixed_params_note(ok, varying))
    return fig


def make_plots(summaries: Sequence[CaseSummary], run: Run) -> list[Plot]:
    """Every plot the results call for: each experiment's own plots (one set per environment when a run has
    several), then the generic plot for every benchmark no experiment plot covers."""
    plots: list[Plot] = []
    envs = ordered([s.env_name for s in summaries], run.env_names)
    covered: set[str] = set()
    for spec in plot_specs():
        for env in envs:
            subset = [s for s in summaries if s.env_name == env]
            try:
                figure = spec.function(subset, run)
            except Exception as exc:  # one odd result must not cost the whole report: fall back, and say so
                warnings.warn(f"plot {spec.key} failed ({exc!r}); its benchmarks get the generic plot",
                              RuntimeWarning, stacklevel=2)
                continue
            if figure is None:
                continue
            suffix = f"-{_slug(env)}" if len(envs) > 1 else ""
            plots.append(Plot(spec.key + suffix, spec.title + (f" ({env})" if suffix else ""), figure, spec.caption))
            covered.update(spec.benchmarks)
    for benchmark in ordered([s.benchmark for s in summaries]):
        if benchmark in covered:
            continue
        figure = generic_plot([s for s in summaries if s.benchmark == benchmark], run)
        if figure is not None:
            plots.append(Plot(f"{_slug(benchmark)}-time", f"{benchmark}: median time per case", figure,
                              "Median wall time of every timed iteration of every process; error bars span "
                              "the interquartile range of those samples."))
    return plots


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in text).strip("-") or "x"

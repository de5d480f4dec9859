"""The small chart beside each change on the dashboard's front page (report/overview.py): the case's processes run by
run (or environment by environment), the two compared sides coloured, so a change is seen at a glance from its
second run on — asv's grid of small graphs and Conbench's recent regressions show the same, with history."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from matplotlib.figure import Figure

from colbench.render.figures import LIMIT_COLOR, PALETTE, count_unit, new_figure, styled, time_unit
from colbench.report.plots_compare import VERDICT_COLORS

BASELINE_COLOR = PALETTE[0]


@dataclass(frozen=True)
class Column:
    """One run (or environment) of the case: its label under the axis, each process's median, its role."""

    label: str
    values: tuple[float, ...]
    role: str = ""  # "baseline", "contender" or "" (an earlier run, for context)


@styled
def change_figure(columns: Sequence[Column], metric: str, verdict: str) -> Figure | None:
    """Each run's process medians as dots and their median as a bar; the baseline blue, the contender in the
    verdict's colour, other runs grey; the y axis from zero, so the size of a step reads true."""
    if not any(c.values for c in columns):
        return None
    highest = max(v for c in columns for v in c.values)
    if metric == "instructions":
        scale, unit = count_unit([highest])
    elif metric in ("memory", "arrow_memory", "file_size"):
        scale, unit = 1024.0 ** 2, "MiB"
    else:
        scale, unit = time_unit([highest])
    fig, axes = new_figure(1, 1, width=3.6, panel_height=1.35)
    ax = axes[0][0]
    for x, column in enumerate(columns):
        color = (BASELINE_COLOR if column.role == "baseline" else
                 VERDICT_COLORS.get(verdict, "#333333") if column.role == "contender" else LIMIT_COLOR)
        ys = [v / scale for v in column.values]
        if not ys:
            continue
        spread = [x + (i - (len(ys) - 1) / 2) * min(0.08, 0.5 / len(ys)) for i in range(len(ys))]
        ax.plot(spread, ys, linestyle="none", marker="o", markersize=3, color=color, alpha=0.8)
        middle = sorted(ys)[len(ys) // 2]
        ax.plot([x - 0.3, x + 0.3], [middle, middle], color=color, linewidth=2 if column.role else 1)
    ax.set_xticks(range(len(columns)), [c.label for c in columns], fontsize=6)
    ax.set_xlim(-0.6, len(columns) - 0.4)
    ax.set_ylim(bottom=0, top=highest / scale * 1.2)
    ax.set_ylabel(f"{metric} ({unit})", fontsize=6)
    ax.tick_params(labelsize=6)
    return fig

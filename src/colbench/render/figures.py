"""The figure kit: one look for every plot (style, palette, units, axes) and the Plot that renders it.

Figures are built with the object API (``matplotlib.figure.Figure``, Agg canvas), never pyplot, so nothing is
global and the dashboard can render from several threads.
"""

from __future__ import annotations

import base64
import contextlib
import functools
import io
import logging
import math
import numbers
import textwrap
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

import matplotlib

matplotlib.use("Agg")  # before anything else of matplotlib: never a GUI backend, even from a desktop session

from matplotlib.axes import Axes  # noqa: E402
from matplotlib.axis import Axis  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from colbench.analysis.aggregate import CaseSummary  # noqa: E402
from colbench.model.records import Run  # noqa: E402
from colbench.paths import owned_dir, write_atomic, write_text  # noqa: E402

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType  # only for checking: matplotlib 3.8 has no such name at run time

_TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))
_log = logging.getLogger(__name__)
#: characters per line of a case label on a plot's axis: longer labels wrap, never run off the figure
LABEL_WIDTH = 34

#: draws one figure from a run's case summaries and the run itself (its environments, calibration); None when the
#: summaries hold nothing it shows
PlotFunction = Callable[[Sequence[CaseSummary], Run], Figure | None]


P = ParamSpec("P")


R = TypeVar("R")


T = TypeVar("T")


#: Okabe–Ito: tells apart for every kind of colour vision.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")


GRID_COLOR = "#dddddd"


LIMIT_COLOR = "#555555"


#: Params that make good facets (one panel per value), most telling first.
FACET_PREFERENCE = ("source", "dataset", "threads", "codec", "compression", "format", "type", "engine", "cache",
                    "allocator")


MAX_FACETS = 8


#: how axes share their scale across a figure's panels (matplotlib's `sharex` / `sharey`)
Share = bool | Literal["none", "all", "row", "col"]


STYLE: dict[RcKeyType, object] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",  # text stays text in SVG: smaller, searchable, selectable
    "svg.hashsalt": "colbench",  # deterministic ids: the same figure gives the same SVG
}


@dataclass
class Plot:
    """A rendered plot: a stable file stem, a title and caption for the page, the figure."""

    key: str
    title: str
    figure: Figure
    caption: str = ""
    _png: bytes | None = field(default=None, repr=False)

    def png(self, dpi: int = 110) -> bytes:
        if self._png is None:
            buffer = io.BytesIO()
            with matplotlib.rc_context(STYLE), handled_warnings():
                self.figure.savefig(buffer, format="png", dpi=dpi, facecolor="white")
            self._png = buffer.getvalue()
        return self._png

    def svg(self) -> str:
        buffer = io.StringIO()
        with matplotlib.rc_context(STYLE), handled_warnings():
            self.figure.savefig(buffer, format="svg", facecolor="white")
        return buffer.getvalue()

    def data_uri(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png()).decode("ascii")

    def save(self, directory: Path, root: Path | None = None) -> tuple[Path, Path]:
        """Write `<key>.png` and `<key>.svg` into directory; returns both paths. `root` (default: `directory`): the
        output directory the user chose, from which every level is checked (colbench.paths: no file is written
        through a link that leads out of it)."""
        top = root if root is not None else directory
        owned_dir(directory, "plot folder", top)
        png, svg = directory / f"{self.key}.png", directory / f"{self.key}.svg"
        write_atomic(png, self.png(), "plot", top, durable=False)
        write_text(svg, self.svg(), "plot", top)
        return png, svg


def new_figure(rows: int = 1, cols: int = 1, *, width: float = 7.5, panel_height: float = 2.6,
               sharex: Share = False, sharey: Share = False) -> tuple[Figure, list[list[Axes]]]:
    """A white, constrained-layout figure with a grid of axes (always 2-D)."""
    with matplotlib.rc_context(STYLE):
        fig = Figure(figsize=(width, min(0.9 + panel_height * rows, 40.0)), layout="constrained")
        axes = fig.subplots(rows, cols, squeeze=False, sharex=sharex, sharey=sharey)
        for ax in axes.flat:
            ax.grid(True, axis="both", color=GRID_COLOR, linewidth=0.6)
            ax.set_axisbelow(True)
    return fig, [list(row) for row in axes]


def styled(function: Callable[P, R]) -> Callable[P, R]:
    """Build the figure under colbench's style (font sizes and spines are read when artists are created)."""

    @functools.wraps(function)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with matplotlib.rc_context(STYLE), handled_warnings():
            return function(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def handled_warnings() -> Iterator[None]:
    """Warnings while a figure is built or drawn (matplotlib's "constrained_layout not applied", a glyph a font
    lacks, numpy's over an empty series) go to this module's debug log, never to a user's stderr or the dashboard's
    log: figures are sized so that they do not happen, and the tests fail when one does
    (tests/report/test_plot_layout.py reads this log). matplotlib names the caller's line, not its own, as where
    it warned: every warning of the block is taken, whoever raised it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for warning in caught:
        _log.debug("a figure warned (%s:%s): %s", warning.filename, warning.lineno, warning.message)


def wrap_label(text: str, width: int = LABEL_WIDTH) -> str:
    """A case label in lines of at most `width` characters, broken between words (`name=value` stays whole)."""
    return "\n".join(textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)) or text


def key_labels(labels: Sequence[str], width: int = LABEL_WIDTH) -> tuple[list[str], str]:
    """Case labels as a plot's axis shows them, with their key: the words every label shares go into the key (for
    a subtitle), each label keeps what tells it apart, wrapped. One label alone is kept whole, wrapped."""
    words = [label.split() for label in labels]
    if len(words) < 2:
        return [wrap_label(label, width) for label in labels], ""
    shared = [word for word in words[0] if all(word in others for others in words[1:])]
    own = [" ".join(word for word in ws if word not in shared) for ws in words]
    if len(set(own)) < len(own):  # the shared words told some apart (order, repeats): keep the labels whole
        return [wrap_label(label, width) for label in labels], ""
    return [wrap_label(label, width) for label in own], " ".join(shared)


def count_unit(values: Sequence[float]) -> tuple[float, str]:
    """Scale and unit for instruction counts so the largest value reads between 1 and 1000."""
    biggest = max((abs(v) for v in values if v and math.isfinite(v)), default=1.0)
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if biggest >= scale:
            return scale, unit
    return 1.0, "count"


def plain_log(axis: Axis) -> None:
    """Log-scale tick labels as plain numbers (0.1, 1, 10; 2, 3, 5 between them on short ranges), not 10^x."""

    def minor(value: float, _: Any) -> str:
        low, high = sorted(axis.get_view_interval())
        if value <= 0 or low <= 0 or high / low > 30:
            return ""
        mantissa = round(value / 10 ** math.floor(math.log10(value)))
        return f"{value:g}" if high / low < 4 or mantissa in (2, 3, 5) else ""

    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axis.set_minor_formatter(FuncFormatter(minor))


def title(fig: Figure, text: str, subtitle: str = "") -> None:
    """The figure's title, its subtitle wrapped to the figure's width (a long list of fixed params never runs off
    the right edge)."""
    if subtitle:
        width = int(fig.get_figwidth() * 11)  # characters of 10-point DejaVu Sans across the figure, with a margin
        subtitle = "\n".join(textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False)
                             for line in subtitle.splitlines())
    fig.suptitle(text + (f"\n{subtitle}" if subtitle else ""), fontsize=11 if not subtitle else 10,
                 x=0.01, ha="left")


def time_unit(values: Sequence[float | None]) -> tuple[float, str]:
    """Scale and unit for seconds so the largest value reads between 1 and 1000."""
    present = [abs(v) for v in values if v is not None and math.isfinite(v) and v > 0]
    biggest = max(present) if present else 1.0
    for unit, scale in _TIME_UNITS:
        if biggest >= scale:
            return scale, unit
    return _TIME_UNITS[-1][1], _TIME_UNITS[-1][0]


def byte_unit(values: Sequence[float | None]) -> tuple[float, str]:
    """Scale and binary unit for byte counts so the largest reads between 1 and 1024."""
    biggest = max((v for v in values if v), default=1.0)
    for unit, power in (("GiB", 3), ("MiB", 2), ("KiB", 1)):
        if biggest >= 1024**power:
            return float(1024**power), unit
    return 1.0, "bytes"


def fmt_time(value: float | None) -> str:
    """Seconds for a bar label, three significant digits in the unit that suits the value: 680 ms, 5.31 s."""
    if value is None or not math.isfinite(value) or value <= 0:
        return ""
    for unit, scale in _TIME_UNITS:
        if value >= scale or unit == "ns":
            scaled = value / scale
            return f"{scaled:.3g} {unit}" if scaled < 1000 else f"{scaled:,.0f} {unit}"
    return ""


def _number(stats: Mapping[str, object], key: str) -> float | None:
    """A statistic of a stored summary as a float; None when it is absent (or not a number)."""
    value = stats.get(key)
    # numbers.Real: numpy scalars too, as summaries computed in process hold them
    return float(value) if isinstance(value, numbers.Real) and not isinstance(value, bool) else None


def quartiles(stats: Mapping[str, object] | None) -> tuple[float, float, float] | None:
    """(q1, median, q3) of a stored summary; median ± IQR/2 when the quartiles are not stored."""
    median = _number(stats, "median") if stats else None
    if stats is None or median is None:
        return None
    q1, q3 = _number(stats, "q1"), _number(stats, "q3")
    if q1 is not None and q3 is not None:
        return q1, median, q3
    half = (_number(stats, "iqr") or 0.0) / 2
    return max(median - half, 0.0), median, median + half


def error_bar(stats: Mapping[str, object] | None, scale: float = 1.0) -> tuple[float, float]:
    """(below, above) distances from the median to the quartiles, for `xerr`/`yerr`."""
    q = quartiles(stats)
    if q is None:
        return 0.0, 0.0
    return max(q[1] - q[0], 0.0) / scale, max(q[2] - q[1], 0.0) / scale


def median(summary: CaseSummary | None) -> float | None:
    return summary.wall.get("median") if summary is not None and summary.ok else None


def wide_range(values: Sequence[float | None], factor: float = 50.0) -> bool:
    """True when the values span more than `factor`: a log axis then shows them all."""
    present = [v for v in values if v is not None and v > 0]
    return len(present) > 1 and max(present) / min(present) > factor


def fixed_params_note(summaries: Sequence[CaseSummary], shown: Sequence[str]) -> str:
    """The params every case shares, e.g. 'rows=100000 threads=2', for a subtitle."""
    if not summaries:
        return ""
    first = summaries[0].params
    hidden = {"error", "cache", "allocator"}
    fixed = [k for k in first if k not in shown and all(s.params.get(k) == first[k] for s in summaries)]
    return " ".join(f"{k}={first[k]}" for k in fixed if not (k in hidden and first[k] in ("none", "warm", "default")))


def ordered(values: Sequence[T], order: Sequence[T] = ()) -> list[T]:
    """Distinct values, the known ones in `order` first, then the rest sorted."""
    distinct = list(dict.fromkeys(values))
    known = [v for v in order if v in distinct]
    rest = sorted((v for v in distinct if v not in known), key=lambda v: (str(type(v)), v))
    return known + rest


def pick(summaries: Sequence[CaseSummary], **params: Any) -> CaseSummary | None:
    """The ok case with exactly these param values (None when absent or failed)."""
    for s in summaries:
        if s.ok and all(s.params.get(k) == v for k, v in params.items()):
            return s
    return None


def facet_param(summaries: Sequence[CaseSummary], varying: Sequence[str]) -> str | None:
    """The param to split panels by: a telling one that varies, when another varying param is left for bars."""
    if len(varying) < 2:
        return None
    for name in FACET_PREFERENCE:
        if name in varying and len({str(s.params.get(name)) for s in summaries}) <= MAX_FACETS:
            return name
    return None


@dataclass(frozen=True)
class PlotSpec:
    key: str
    title: str
    caption: str
    benchmarks: tuple[str, ...]  # what the plot covers: these get no generic plot
    function: PlotFunction

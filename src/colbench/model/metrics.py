"""The metrics colbench records and compares: one definition each, read by everything that names a metric.

A `Metric` says where its values live in a stored result, its unit, which direction is better, how it is
measured, the smallest change that matters by default, and which comparison fits its noise (see
colbench.analysis.verdicts, and docs/gating.md for why each metric gets the test it gets). Adding a metric is one
entry here plus whatever records its values; compare, the gate, history, reports, the dashboard and claims read it
from here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from colbench.model.params import did_you_mean
from colbench.redact import clip

Direction = Literal["lower_is_better", "higher_is_better"]
#: which test decides a comparison of this metric (analysis/verdicts.py):
#: "rank" exact rank tests only; "t" the pooled t on per-process log values at every size; "auto" the paired t over
#: blocks where the rank test cannot reach the error level with the blocks at hand (or barely), the rank test beyond
Test = Literal["rank", "t", "auto"]


class Measured(Protocol):
    """What a metric reads its values from: a stored result (model/records.py `Result`)."""

    @property
    def samples(self) -> Mapping[str, list[float | None]]: ...


@dataclass(frozen=True)
class Metric:
    """One metric. Values are read per worker process: a per-iteration series (`series`, a key of a result's
    `samples`), or one number per process at `path` (keys into the result document, e.g. memory.peak_rss_bytes)."""

    name: str
    unit: str
    direction: Direction
    #: how the value is measured, in one line for docs, tables and `colbench compare --help`
    measured: str
    #: smallest relative change that matters when the user names none
    threshold: float
    test: Test
    #: the smallest between-process spread (sd of log values) a t-interval assumes: it protects the t from a few
    #: processes that happen to agree (two sides repeating one instruction count each; a few blocks of a VM that
    #: switches CPU speeds and happened not to). Wall time's 5% is the low end of what real cases spread between
    #: processes on the reference VM (docs/gating.md). 0 for metrics that are exactly deterministic (a file's size).
    noise_floor: float
    series: str | None = None
    path: tuple[str, ...] = ()
    #: its noise does not change with the machine's load (instruction counts): earlier runs of a case on this
    #: machine may lend their between-process spread to a comparison (docs/gating.md, "Which test decides")
    stable_noise: bool = False
    #: blocks of the first look when a run of several environments stops once decided (the default), and the fewest
    #: blocks a later look adds (`look_step`); `fixed_blocks` when it takes one look (`run --no-until-decided`)
    first_look: int = 4
    look_step: int = 4
    fixed_blocks: int = 12
    #: the default budget of a run that stops once decided: what `budget_blocks` more blocks of every case cost on
    #: this machine (runner/estimate.py), and never less than `min_budget_s`
    budget_blocks: int = 100
    min_budget_s: float = 600.0
    #: blocks a comparison of a real change typically takes to decide on the 2-core reference VM, what the dry run of
    #: a run that stops once decided expects (docs/gating.md: wall time decides +30% at 4 blocks, +20% at 5-6 and
    #: +10% at 8-10; counts decide +1-2% at 2 processes a side)
    expected_blocks: int = 8
    #: processes a point at a bisect step's first look (each further look doubles them): wall time needs eight
    #: blocks for its paired t to see a change of about 10% through a 5% noise floor; counts repeat, so two decide
    bisect_first_look: int = 8
    #: a process stops timing once two values in a row agree within this (relative): the metric's own spread inside
    #: a process, below which more calls add nothing (instruction counts repeat within 0.05%); None: every iteration
    repeat_within: float | None = None
    #: offered by `colbench compare` (others serve the claims of the reference experiments)
    comparable: bool = True
    words: tuple[str, str] = ("higher", "lower")

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher_is_better"

    def axis_label(self) -> str:
        better = "higher" if self.higher_is_better else "lower"
        return f"{self.name} ratio contender / baseline (log scale; {better} is better)"

    def values(self, result: Measured) -> list[float] | None:
        """This metric's values in one process's result: the per-iteration series, or the one per-process value;
        None when the result has none."""
        if self.series is not None:
            values = [float(v) for v in result.samples.get(self.series) or [] if v is not None]
            return values or None
        value: Any = getattr(result, self.path[0], None)
        for key in self.path[1:]:
            value = value.get(key) if isinstance(value, Mapping) else None
        return [float(value)] if isinstance(value, int | float) and value else None


# a change smaller than 3% is too small to act on for a macrobenchmark (the Conbench default, too); metrics whose
# noise allows a finer line (instructions) set their own
DEFAULT_THRESHOLD = 0.03

METRICS: dict[str, Metric] = {m.name: m for m in (
    Metric("time", "s", "lower_is_better",
           "wall time of the timed call per iteration (monotonic ns clock; CPU time recorded beside it)",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.05, series="wall_s", first_look=4, look_step=4,
           fixed_blocks=12, budget_blocks=100, min_budget_s=600.0, expected_blocks=8, bisect_first_look=8,
           words=("slower", "faster")),
    Metric("instructions", "instructions", "lower_is_better",
           "instructions of the timed call per iteration, counted under Valgrind's callgrind (`--measure "
           "instructions`)",
           threshold=0.0025, test="t", noise_floor=0.001, series="instructions", stable_noise=True, first_look=2,
           look_step=1, fixed_blocks=3, budget_blocks=8, min_budget_s=120.0, expected_blocks=2, bisect_first_look=2,
           repeat_within=0.002, words=("more instructions", "fewer instructions")),
    Metric("memory", "B", "lower_is_better", "peak resident set size of the worker process (getrusage)",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.001, path=("memory", "peak_rss_bytes"),
           words=("larger", "smaller")),
    Metric("arrow_memory", "B", "lower_is_better",
           "peak bytes allocated from Arrow's default memory pool during the process (pool.max_memory())",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.001, path=("memory", "engine_peak_bytes"),
           words=("larger", "smaller")),
    Metric("file_size", "B", "lower_is_better", "size of the file a write case produced",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.0, path=("output", "file_size_bytes"),
           words=("larger", "smaller")),
    Metric("first_run", "s", "lower_is_better", "wall time of the first iteration of a fresh process",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.05, path=("first_iteration", "wall_s"),
           comparable=False,
           words=("slower", "faster")),
    Metric("input_size", "B", "lower_is_better", "size of the file a read case reads",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.0, path=("inputs", "data", "size_bytes"),
           comparable=False,
           words=("larger", "smaller")),
    # asv's value benchmarks (docs/asv.md): one value per call, filed per iteration by the worker. asv's own compare
    # marks a rise as worse for every kind, track_ included (a track benchmark cannot say which way is better), and
    # colbench does as asv does. Their noise is the benchmark's own, so the wall-time floor and tests apply.
    Metric("asv_mem", "B", "lower_is_better",
           "size of the object an asv mem_* benchmark returns (pympler's asizeof, as asv measures it)",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.001, series="asv_mem", words=("larger", "smaller")),
    Metric("asv_peakmem", "B", "lower_is_better",
           "peak resident set size of the process after an asv peakmem_* benchmark's call (asv's own measure)",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.001, series="asv_peakmem",
           words=("larger", "smaller")),
    Metric("asv_track", "", "lower_is_better",
           "the value an asv track_* benchmark returns, in the benchmark's own `unit` (a rise is worse, as asv's "
           "compare reads every kind)",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.001, series="asv_track",
           words=("higher", "lower")),
    Metric("gbps", "Gbps", "higher_is_better", "bandwidth of the value bytes a scan touched per iteration",
           threshold=DEFAULT_THRESHOLD, test="auto", noise_floor=0.05, series="gbps", comparable=False,
           words=("lower bandwidth", "higher bandwidth")),
)}

#: the metrics `colbench compare`, the report and the dashboard offer, in the order they show them
COMPARE_METRICS: tuple[str, ...] = tuple(name for name, m in METRICS.items() if m.comparable)
#: the metrics recorded as a per-iteration series: the ones history, report plots and the dashboard draw over time
SERIES_METRICS: tuple[str, ...] = tuple(name for name, m in METRICS.items() if m.series and m.comparable)
#: the metrics `colbench history` follows over runs or versions: every comparable one (a per-process metric such as
#: peak RSS is one value per process, placed as the per-iteration ones are by the medians of their processes)
HISTORY_METRICS: tuple[str, ...] = COMPARE_METRICS
#: the units of the series every worker records; benchmarks add their own (e.g. gbps) through the report
BASE_UNITS = {"wall_s": "s", "cpu_user_s": "s", "cpu_sys_s": "s"}


class UnknownMetric(ValueError):
    """A metric name colbench does not know."""


def metric(name: str) -> Metric:
    """The metric of this name; UnknownMetric (saying which exist) otherwise."""
    try:
        return METRICS[name]
    except KeyError:
        raise UnknownMetric(f"unknown metric {clip(repr(name))}: choose {', '.join(COMPARE_METRICS)}"
                            f"{did_you_mean(name, COMPARE_METRICS)}") from None


def metric_or_none(name: str) -> Metric | None:
    return METRICS.get(name)


def series_of(name: str) -> str:
    """The samples key of a per-iteration metric (`time` → `wall_s`)."""
    found = metric(name).series
    if found is None:
        raise UnknownMetric(f"metric {name!r} has one value per process, not a series over iterations")
    return found


def value_key(name: str) -> str:
    """Where a result's summary keeps this metric's per-process value (`ResultSummary.medians`): the samples key of
    a per-iteration metric (`time` → `wall_s`), else the metric's own name (store/selection.py puts it there)."""
    return metric(name).series or name


def default_threshold(name: str) -> float:
    return metric(name).threshold


#: what `--measure` chooses: wall time (with CPU time beside it) and instructions counted under callgrind, in this
#: order; a run records the metrics `MEASURED_METRICS` names for each
MeasureWord = Literal["wall", "instructions"]
MEASURES: tuple[MeasureWord, ...] = ("wall", "instructions")
#: what a run measures: the words of `MEASURES` it chose, in their order (parsed once, from `--measure`)
Measure = tuple[MeasureWord, ...]
MEASURED_METRICS: dict[MeasureWord, str] = {"wall": "time", "instructions": "instructions"}


def parse_measure(text: str) -> Measure:
    """`wall`, `instructions` or `wall,instructions` → the metrics, in canonical order."""
    chosen = {part.strip() for part in text.split(",") if part.strip()}
    unknown = sorted(chosen - set(MEASURES))
    if unknown or not chosen:
        raise ValueError(f"--measure {text!r}: choose wall, instructions or wall,instructions")
    return tuple(m for m in MEASURES if m in chosen)


def deciding_metric(measured: Iterable[str]) -> str:
    """The one rule of which metric a comparison's verdicts decide on: instruction counts where they were counted
    (deterministic: a few processes decide; `measured` holds `--measure`'s words or the metrics' names, where
    "instructions" is both), else time. Runs, sessions, watches, bisects, calibration and the report ask here."""
    return "instructions" if "instructions" in measured else "time"


def measure_from_json(stored: object) -> Measure:
    """A stored run's `measure` (a list of words; absent in runs older than `--measure`: wall time)."""
    words = stored if isinstance(stored, list | tuple) else ()
    chosen = tuple(m for m in MEASURES if m in words)
    return chosen or ("wall",)

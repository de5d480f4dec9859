"""Which time a verdict compares: wall time, or the worker's CPU time (user + sys) where that is quieter.

Every worker records, per timed iteration, wall time and the CPU time its process used (getrusage,
all threads). On a busy machine wall time also counts the time the worker waited for a CPU that another
job held; CPU time does not, so for a case that keeps one core busy it can be much quieter. But CPU time
is blind to waiting: I/O, sleeps, lock contention, a slower disk. So the rule, per case:

1. CPU time is *eligible* when every process of both sides recorded it, ran single-threaded (pinned to one
   CPU: `threads` 1), and spent its wall time on its own CPU work or waiting for a CPU: per iteration
   (CPU time + run delay) / wall time has its median >= 0.9, where the run delay is the time the worker's
   threads were runnable while another job held the CPU (recorded by the Python worker on Linux). Then
   wall time is CPU time plus waiting for a CPU: added work shows up in CPU time as the same relative
   change it would make on a quiet machine, so a threshold on CPU time means what it means on wall time.
   Without a recorded run delay (R, Java workers), the 90th percentile of CPU time / wall time must be
   >= 0.9 (the least disturbed iterations show what the case itself does). Multi-threaded cases (a
   serial slowdown is diluted in the CPU time of several threads) and cases that wait for I/O (waiting
   is invisible to CPU time) stay on wall time.
2. It is *chosen* when it is clearly quieter: the spread (Qn) over blocks of the per-block *sum* of the
   two sides' log medians is below `QUIETER` (0.8) times that of wall time. A sum, not the difference
   the verdict tests: it carries the same process and iteration noise, but no trace of the effect (a
   change adds the same constant to every block) and does not change when a block's sides swap.
3. When CPU time is chosen, wall time is still compared as a check: each at half the error level
   (Bonferroni over the two), and a regression on either is a regression (a slowdown that is pure
   waiting is not missed once wall time resolves it). Where the blocks reach the family's level but not
   half of it, `compare_suite` sets the CPU view aside and wall time decides alone at the full level.

Every input of the rule is unchanged when the two sides of a block swap places, so under "no change"
the choice carries no information about the sign of the effect and the exact rank test stays exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from colbench.analysis.stats import qn_sigma
from colbench.analysis.verdicts import CaseInput
from colbench.model.records import Result

BASES = ("wall", "cpu")
#: Share of wall time that must be CPU work or waiting for a CPU for CPU time to stand in for it.
BUSY = 0.9
#: CPU time must be at least this much quieter than wall time to be chosen.
QUIETER = 0.8


def iteration_values(result: Result, basis: str) -> list[float] | None:
    """The result's per-iteration values of `basis` (wall; cpu = user + sys; run_delay, the time spent
    waiting for a CPU); None when not recorded for every iteration."""
    samples = result.samples
    wall = samples.get("wall_s") or []
    if basis == "wall":
        return [float(v) for v in wall if v is not None] or None
    if basis == "run_delay":
        delays = samples.get("run_delay_s") or []
        known = [float(v) for v in delays if v is not None]
        return known if len(known) == len(wall) else None
    if basis != "cpu":
        raise ValueError(f"unknown time basis {basis!r} (wall, cpu)")
    return _cpu_values(samples.get("cpu_user_s"), samples.get("cpu_sys_s"), len(wall))


def _cpu_values(user: Sequence[float | None] | None, system: Sequence[float | None] | None,
                iterations: int) -> list[float] | None:
    """user + sys of every iteration; None when an iteration lacks either, or spent none."""
    if not user or not system or len(user) != len(system) or len(user) != iterations:
        return None
    values = [float(u) + float(s) for u, s in zip(user, system, strict=True) if u is not None and s is not None]
    if len(values) != iterations or not all(v > 0 for v in values):
        return None
    return values


def busy_share(wall: Sequence[Sequence[float]], cpu: Sequence[Sequence[float]],
               run_delay: Sequence[Sequence[float]] | None = None) -> float:
    """How much of wall time is the case's own CPU work (or waiting for a CPU): median over iterations of
    (CPU + run delay) / wall when the run delay is known, else the 90th percentile of CPU / wall."""
    if run_delay is not None:
        ratios = [(c + d) / w for ws, cs, ds in zip(wall, cpu, run_delay, strict=True)
                  for w, c, d in zip(ws, cs, ds, strict=True) if w > 0]
        return float(np.median(ratios)) if ratios else math.nan
    ratios = [c / w for ws, cs in zip(wall, cpu, strict=True) for w, c in zip(ws, cs, strict=True) if w > 0]
    return float(np.quantile(ratios, 0.9)) if ratios else math.nan


def _noise(case: CaseInput) -> float:
    """Qn spread over blocks of log median(baseline) + log median(contender): blind to the effect and to
    which side of a block is which."""
    assert case.baseline_blocks is not None and case.contender_blocks is not None
    sums: dict[int, float] = {}
    for samples, blocks in ((case.baseline, case.baseline_blocks), (case.contender, case.contender_blocks)):
        for proc, block in zip(samples, blocks, strict=True):
            if len(proc):
                sums[block] = sums.get(block, 0.0) + math.log(float(np.median(proc)))
    return qn_sigma(list(sums.values()))


def choose_basis(wall: CaseInput, cpu: CaseInput | None, run_delay: Sequence[Sequence[float]] | None = None,
                 single_threaded: bool = True) -> tuple[str, str]:
    """('wall' or 'cpu', why) for one paired case; see the module docstring for the rule. `run_delay`:
    per process (baseline's, then contender's) the per-iteration run delay, when recorded;
    `single_threaded`: every process ran with one thread, pinned to one CPU."""
    if cpu is None:
        return "wall", "CPU time not recorded"
    if wall.baseline_blocks is None or wall.contender_blocks is None:
        return "wall", "unpaired: wall time"
    if not single_threaded:
        return "wall", "several threads: a serial slowdown would be diluted in CPU time, so wall time"
    ratio = busy_share([*wall.baseline, *wall.contender], [*cpu.baseline, *cpu.contender], run_delay)
    if not ratio >= BUSY:  # written so that a NaN share (no iterations) also means wall time
        what = "(CPU + run delay)/wall" if run_delay is not None else "CPU/wall"
        return "wall", f"{what} {ratio:.2f}: the case waits for more than a CPU, so wall time"
    noise_wall, noise_cpu = _noise(wall), _noise(cpu)
    if not (math.isfinite(noise_wall) and math.isfinite(noise_cpu)) or noise_cpu >= QUIETER * noise_wall:
        return "wall", f"CPU time not quieter (spread {noise_cpu:.2%} vs {noise_wall:.2%})"
    return "cpu", f"CPU time quieter (spread {noise_cpu:.2%} vs {noise_wall:.2%}), CPU/wall {ratio:.2f}"

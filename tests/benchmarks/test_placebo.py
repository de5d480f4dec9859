"""The placebo under --measure instructions: a wall-clock spin is said to count Valgrind's speed, not work."""

from __future__ import annotations

from colbench.benchmarks.placebo import Placebo
from colbench.model.benchmark import Context


def _setup(tmp_path, measure: str, duration: float) -> list[str]:
    ctx = Context(params={"duration": duration, "work": 10, "setup_work": 0, "error": "none"}, inputs={},
                  threads=1, seed=0, scratch=tmp_path, measure=measure)
    Placebo().setup(ctx)
    return ctx.warnings


def test_a_counted_spin_is_named_and_a_counted_zero_duration_is_not(tmp_path):
    (warning,) = _setup(tmp_path, "instructions", 0.01)
    assert "duration=0.01 spins on the wall clock" in warning and "give duration=0" in warning
    assert _setup(tmp_path, "instructions", 0) == []
    assert _setup(tmp_path, "wall", 0.01) == []

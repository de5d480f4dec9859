"""`app.history` called directly over real runs in a real DuckDB store (made by `colbench run`, shared with
tests/cli/test_history.py): the series chained through a baseline measured in every run, with the step found where
it happens, and bad requests refused before the store is read."""

from __future__ import annotations

from pathlib import Path

import pytest

from colbench.app.errors import UsageError
from colbench.app.history import HistoryRequest, history
from colbench.app.stores import store_at
from tests.conftest import STEPPED_DURATION


@pytest.mark.slow
@pytest.mark.serial  # the step is in measured times: alone (tests/xdist_plan.py)
def test_the_series_chains_runs_through_a_baseline_and_finds_the_step(stepped_history: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """12 runs, each measuring a baseline (`ref`) beside the code (`code`, 50% slower from the 7th on;
    tests/conftest.py): the runs chain through the baseline, and the step is found where it is."""
    monkeypatch.setenv("COLBENCH_HOME", str(stepped_history))
    monkeypatch.delenv("COLBENCH_STORE", raising=False)
    found = history(store_at(None, create=False), HistoryRequest("placebo", {"duration": STEPPED_DURATION}))
    series = {h.env_name: h for h in found.histories}
    code = series["code"]
    assert code.machine_id == found.machine_id and code.metric == "time" and len(code.points) == 12
    assert all(p.processes == 2 and p.ratio is not None for p in code.points)
    (change,) = code.change_points
    assert change.index == 6 and 0.2 < change.magnitude < 0.8  # 1.5x, through this loaded VM's noise
    assert not series["ref"].change_points
    with pytest.raises(UsageError, match="no successful results of placebo on machine .* match those params"):
        history(store_at(None, create=False), HistoryRequest("placebo", {"duration": "9"}))


@pytest.mark.slow
def test_a_history_of_peak_memory(stepped_history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`history --metric memory`: a point per run of the peak RSS each process recorded (one value a process), in
    bytes, placed as time's points are; the CPU-bound placebo's 50% slowdown leaves its memory alone (peak RSS
    repeats to hundredths of a percent, so a step of a few pages may be found, never one of percents)."""
    monkeypatch.setenv("COLBENCH_HOME", str(stepped_history))
    monkeypatch.delenv("COLBENCH_STORE", raising=False)
    found = history(store_at(None, create=False),
                    HistoryRequest("placebo", {"duration": STEPPED_DURATION}, metric="memory"))
    code = {h.env_name: h for h in found.histories}["code"]
    assert code.metric == "memory" and len(code.points) == 12
    assert all(p.processes == 2 and 10 * 2**20 < p.median < 2**30 for p in code.points), [p.median for p in code.points]
    assert all(abs(c.magnitude) < 0.01 for c in code.change_points), code.change_points


@pytest.mark.parametrize(("request_", "message"), [
    (HistoryRequest("placebo", metric="nope"), "--metric 'nope': choose time, instructions, memory"),
    (HistoryRequest("placebo", metric="memroy"), "did you mean 'memory'?"),
    (HistoryRequest("placebo", by="versoin"), "--by 'versoin': choose time or version"),
    (HistoryRequest("placebo", by="version"), "--by version needs --package NAME"),
    (HistoryRequest("placebo", package="pyarrow"), "--package only goes with --by version"),
])
def test_bad_requests_are_refused_before_the_store_is_read(request_: HistoryRequest, message: str) -> None:
    class NoStore:  # a store that must not be touched
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"the store was read ({name})")

    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        history(NoStore(), request_)  # type: ignore[arg-type]

"""E3's judge: the machine bandwidth a run measured (`MachineBandwidth`), and the verdict on a case's Gbps against
the bandwidth of the same kind; and the typed reads of a case's params the experiments use."""

from __future__ import annotations

import pytest

from colbench.analysis.aggregate import CaseSummary, summarize_cases
from colbench.experiments.case_params import param_int, param_text, thread_count
from colbench.experiments.e3_ipc_bandwidth.table import gbps_verdict
from colbench.model.benchmark import ParamTypeError
from colbench.model.params import ParamValue
from colbench.model.run_parts import MachineBandwidth
from tests.records import make_result, make_run

#: as machine/bandwidth.measure writes it into the run record
CALIBRATION = {"memcpy_gbps": {"1": 40.0, "2": 70.0}, "read_gbps": {"1": 60.0}, "method": "numpy, best of 5"}


def _case(gbps: float, **params: ParamValue) -> CaseSummary:
    result = make_result(benchmark="ipc-bandwidth", params={"threads": 1, **params},
                         samples={"wall_s": [0.01, 0.011, 0.012], "gbps": [gbps] * 3})
    (summary,) = summarize_cases([result])
    return summary


def test_the_runs_calibration_gives_each_bandwidth_by_thread_count():
    bandwidth = MachineBandwidth.of(make_run(calibration=CALIBRATION))
    assert bandwidth.memcpy_gbps == {"1": 40.0, "2": 70.0} and bandwidth.read_gbps == {"1": 60.0}
    assert bandwidth.memcpy(2) == 70.0 and bandwidth.read(1) == 60.0
    assert bandwidth.read(4) == 60.0, "a thread count not measured takes the largest figure measured"
    none = MachineBandwidth.of(make_run())
    assert none.memcpy(1) is None and none.read(1) is None and none == MachineBandwidth.of(None)


def test_a_zero_copy_read_is_judged_against_read_bandwidth_and_a_stream_against_memcpy():
    bandwidth = MachineBandwidth.from_json(CALIBRATION)
    assert gbps_verdict(_case(30.0, access="scan", source="buffer"), bandwidth) == (30.0, "50% of read bandwidth")
    assert gbps_verdict(_case(30.0, access="scan", source="stream"), bandwidth) == (30.0, "75% of memcpy")
    assert gbps_verdict(_case(30.0, access="scan"), bandwidth)[1] == "50% of read bandwidth", "buffer by default"
    assert gbps_verdict(_case(90.0, access="scan", source="buffer"), bandwidth) == \
        (90.0, "above read bandwidth: cache-resident")
    assert gbps_verdict(_case(500.0, access="lazy", source="buffer"), bandwidth) == (500.0, "bytes not touched")
    assert gbps_verdict(_case(30.0, access="scan", source="buffer"), MachineBandwidth()) == (30.0, "")


def test_params_are_read_as_the_type_the_experiment_needs():
    case = _case(1.0, access="scan", batch_rows=10_000, threads=2)
    assert param_text(case, "access") == "scan" and param_int(case, "batch_rows") == 10_000
    assert thread_count(case) == 2 and param_text(case, "source", "buffer") == "buffer"
    older = _case(1.0, access="scan")
    del older.params["threads"]  # a record from before every case carried its thread count
    assert thread_count(older) == 1
    with pytest.raises(KeyError):
        param_text(case, "source")
    with pytest.raises(ParamTypeError, match="access='scan' is not a number"):
        param_int(case, "access")
    with pytest.raises(ParamTypeError, match="batch_rows=10000 is not a string"):
        param_text(case, "batch_rows")


def test_the_plot_stars_a_cache_resident_point_and_lifts_an_untouched_one():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from colbench.experiments.e3_ipc_bandwidth.plots import _series

    bandwidth = MachineBandwidth.from_json(CALIBRATION)
    members = [_case(30.0, access="scan", source="buffer"), _case(90.0, access="scan", source="buffer"),
               _case(500.0, access="lazy", source="buffer")]
    fig, ax = plt.subplots()
    try:
        top, marks = _series(ax, [1.0, 2.0, 3.0], members, bandwidth, "#1f77b4", "-")
        stars = [line for line in ax.lines if line.get_marker() == "*"]
        assert marks == {"cache", "untouched"}
        assert [list(line.get_ydata()) for line in stars] == [[90.0]]  # the one above read bandwidth, no other
    finally:
        plt.close(fig)

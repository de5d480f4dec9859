"""Plots from real runs: the generic plot, E3's bandwidth curves, the other experiments' plots (with the data
layer), and the compare/history adapters against the analysis modules (and without them)."""

from __future__ import annotations

import json
import math

import pytest
from matplotlib.lines import Line2D

from colbench.experiments.e3_ipc_bandwidth.table import gbps_verdict
from colbench.model.run_parts import MachineBandwidth
from colbench.report.compare_page import env_compares
from colbench.report.plots import make_plots
from colbench.report.plots_history import find_change_points
from tests.conftest import colbench
from tests.report.helpers import assert_png, assert_svg, load_all, load_run

pytestmark = pytest.mark.filterwarnings("error:plot .* failed:RuntimeWarning")  # a broken plot fails


def _texts(figure) -> str:
    parts = [t.get_text() for t in figure.findobj(match=lambda o: hasattr(o, "get_text"))]
    for legend in figure.legends:
        parts += [t.get_text() for t in legend.get_texts()]
    return "\n".join(parts)


@pytest.mark.slow
def test_generic_plot_of_a_placebo_run(placebo_home, tmp_path):
    _, run, summaries = load_run(placebo_home, "p1")
    plots = make_plots(summaries, run)
    assert [p.key for p in plots] == ["placebo-time"]
    plot = plots[0]
    (ax,) = plot.figure.axes
    assert "median wall time" in ax.get_xlabel() and "(ms)" in ax.get_xlabel()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["duration=0.001", "duration=0.002"]
    assert any(t.get_text().endswith("ms") for t in ax.texts), "bars are labelled with their times"
    png, svg = plot.save(tmp_path)
    assert_png(png.read_bytes())
    assert_svg(svg.read_text())


@pytest.mark.slow
def test_bandwidth_plots_have_the_memcpy_limit_and_mark_untouched_bytes(bandwidth_home, tmp_path):
    _, run, summaries = load_run(bandwidth_home)
    plots = {p.key: p for p in make_plots(summaries, run)}
    assert set(plots) == {"e3-bandwidth-batch", "e3-bandwidth-threads"}
    batch = plots["e3-bandwidth-batch"].figure
    assert all(ax.get_xscale() == "log" for ax in batch.axes)
    assert any("Gbps" in ax.get_ylabel() for ax in batch.axes)
    text = _texts(batch)
    assert "memcpy bandwidth, physical limit" in text
    memcpy = run.calibration.memcpy_gbps["1"]
    assert f"{memcpy:.1f}" in text
    untouched = [s for s in summaries if gbps_verdict(s, MachineBandwidth.of(run))[1] == "bytes not touched"]
    triangles = [line for line in batch.findobj(Line2D) if line.get_marker() == "^"]
    if any(int(s.params["threads"]) == 1 for s in untouched):
        assert triangles, "cases faster than memory must be drawn as 'bytes not touched', not as a speed"
    for plot in plots.values():
        png, svg = plot.save(tmp_path)
        assert_png(png.read_bytes(), min_width=800)
        assert_svg(svg.read_text())


@pytest.mark.slow
def test_experiment_plots_from_real_runs(experiments_home, tmp_path):
    _, run, summaries = load_all(experiments_home)
    plots = {p.key: p for p in make_plots(summaries, run)}
    assert {"e1-csv-read", "e2-dsib", "e4-first-vs-warm", "e5-formats"} <= set(plots), sorted(plots)
    e1 = plots["e1-csv-read"].figure
    stacked = [bar for ax in e1.axes for bar in ax.patches if bar.get_x() > 0]
    assert stacked, "the conversion part of the Arrow read is stacked after the Arrow-table part"
    assert "Arrow table → data frame" in _texts(e1)
    assert plots["e2-dsib"].figure.axes[0].get_yscale() == "log"
    assert "×" in _texts(plots["e2-dsib"].figure), "the Parquet speedup is written over each pair"
    assert "first run in a fresh process" in _texts(plots["e4-first-vs-warm"].figure)
    assert any(ax.get_xlabel().startswith("file size (") for ax in plots["e5-formats"].figure.axes)
    for plot in plots.values():
        png, svg = plot.save(tmp_path)
        assert_png(png.read_bytes())
        assert_svg(svg.read_text())


@pytest.mark.slow
def test_compare_adapter_agrees_with_colbench_compare(placebo_home):
    db, run, summaries = load_run(placebo_home, "ab")
    (view,) = env_compares(db, run, summaries, with_plot=False)
    (row,) = view.rows
    proc = colbench("compare", "ab:base", "ab:slow", "--metric", "time", "--format", "json", home=placebo_home)
    assert proc.returncode in (0, 1, 3), proc.stderr
    (expected,) = json.loads(proc.stdout)["comparisons"]
    assert row.verdict == expected["verdict"]
    assert math.isclose(row.ratio, expected["ratio"], rel_tol=1e-9)
    assert row.test == expected["test"]
    assert row.n == (f"{expected['n_blocks']} blocks" if expected["paired"]
                     else f"{expected['n_baseline']}/{expected['n_contender']}")
    if expected["ci_low"] is not None:
        assert math.isclose(row.ci_low, expected["ci_low"], rel_tol=1e-9)
        assert math.isclose(row.ci_high, expected["ci_high"], rel_tol=1e-9)



def test_change_point_adapter_needs_enough_runs():
    marks, method = find_change_points([1.0, 1.0, 1.1])
    assert marks == [] and "at least 10 runs" in method
    values = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.3, 1.31, 1.29, 1.3, 1.32, 1.28, 1.3]
    marks, method = find_change_points(values)
    assert [m.index for m in marks] == [7], marks
    assert marks[0].magnitude == pytest.approx(0.3, abs=0.03)
    assert "e-divisive" in method


def test_a_lone_chosen_case_is_labelled_by_its_params_not_defaults():
    from colbench.analysis.aggregate import CaseSummary
    from colbench.render.fmt import params_label, varying_params

    def summary(benchmark: str, **params: object) -> CaseSummary:
        return CaseSummary(benchmark=benchmark, case_id="c", env_name="default", params=dict(params), engine="python",
                           processes=1, errors=[], wall={"n": 1}, process_medians=[1.0], first_iteration={})

    chosen = summary("placebo", duration=0.0, error="none", threads=1, allocator="default", cache="warm")
    assert params_label(chosen, varying_params([chosen])["placebo"]) == "duration=0.0"
    plain = summary("placebo", duration=0.01, error="none", threads=1, allocator="default", cache="warm")
    assert params_label(plain, varying_params([plain])["placebo"]) == "(defaults)"
    unknown = summary("not-a-benchmark-here", size=3)
    assert params_label(unknown, varying_params([unknown])["not-a-benchmark-here"]) == "size=3"


def test_the_claims_plot_numbers_its_points_and_names_each_claim_by_its_text():
    from colbench.analysis.claims import ClaimStatus, ClaimVerdict
    from colbench.report.claims_figure import claims_figure

    verdicts = [ClaimVerdict(f"e1-internal-id-{i}", "e1", f"claim number {i}: reader {i} beats reader {i + 1}",
                             ClaimStatus.HOLDS, ratio=1.5 + i / 10, ci_low=1.2, ci_high=2.0 + i / 10,
                             published=1.4 + i / 10) for i in range(6)]
    figure = claims_figure(verdicts)
    texts = [t.get_text() for t in figure.texts] + [t.get_text() for ax in figure.axes for t in ax.texts]
    assert not any("internal-id" in t for t in texts), texts
    labels = sorted(t for ax in figure.axes for t in (x.get_text() for x in ax.texts))
    assert labels == [str(i) for i in range(1, 7)]
    key = "\n".join(t.get_text() for t in figure.texts)
    for i in range(6):
        assert f"{i + 1}  claim number {i}: reader {i} beats reader {i + 1}" in key

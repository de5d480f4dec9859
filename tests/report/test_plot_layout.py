"""Plots that read, drawn from records (no worker runs, so cheap): whole case labels inside the figure, no legend
over the data, the band as it is (±0.25%), no plot of a metric nobody measured, one plot comparing a run's
environments, and no matplotlib warning on the way (tests/report/conftest.py fails every report test whose figure
warned: colbench.render.figures logs what matplotlib said instead of letting it reach stderr).

Set COLBENCH_SCREENSHOTS=DIR to keep the PNGs."""

from __future__ import annotations

import os
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg

from colbench.analysis.aggregate import summarize_cases
from colbench.analysis.stats import summary_stats
from colbench.render.figures import Plot, handled_warnings, key_labels
from colbench.report.plots import make_plots
from colbench.report.plots_compare import CompareRow, compare_figure
from tests.records import make_result, make_run
from tests.report.helpers import assert_png

LONG = ("file-read format=parquet codec=uncompressed engine=pyarrow source=fanniemae_2016Q4 rows=100000 threads=1 "
        "output=arrow_table memory_map=False")


def _drawn(plot: Plot, tmp_path: Path):
    """The figure drawn (as the PNG is), saved where COLBENCH_SCREENSHOTS asks."""
    png, _ = plot.save(Path(os.environ.get("COLBENCH_SCREENSHOTS") or tmp_path))
    assert_png(png.read_bytes(), min_height=80)
    figure = plot.figure
    canvas = FigureCanvasAgg(figure)
    with handled_warnings():  # a warning here lands in the log the fixture reads
        canvas.draw()
    return figure, canvas.get_renderer()


def _inside(figure, renderer, artist) -> bool:
    box = artist.get_window_extent(renderer)
    width, height = figure.bbox.width, figure.bbox.height
    return box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1


def test_a_long_case_label_stays_whole_and_inside_the_figure(tmp_path):
    row = CompareRow("file-read", "c1", LONG, 1.0, 1.02, 1.0205, 1.019, 1.022, "regression", metric="instructions")
    figure, renderer = _drawn(Plot("compare-long-label", "t", compare_figure([row], "new vs old", 0.0025)), tmp_path)
    (ax,) = figure.axes
    (label,) = ax.get_yticklabels()
    assert label.get_text().split() == LONG.split(), "every word of the case, wrapped onto lines"
    assert max(len(line) for line in label.get_text().splitlines()) <= 34
    assert _inside(figure, renderer, label), "the label runs off the figure's left edge"
    assert not figure.legends and ax.get_legend() is None, "no legend over the data: each point names its verdict"
    texts = [t.get_text() for t in ax.texts] + [ax.get_xlabel()]
    assert "1.020 regression" in texts and any("±0.25%" in t for t in texts), texts
    assert not any("±0%" in t for t in texts)
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert len(ticks) == len(set(ticks)) >= 3, ticks  # a narrow range still tells its ticks apart


def test_labels_of_several_cases_keep_what_tells_them_apart(tmp_path):
    rows = [CompareRow("file-read", f"c{v}", LONG.replace("False", v), 1.0, 1.0, r, r - 0.01, r + 0.01, verdict)
            for v, r, verdict in (("False", 1.02, "inconclusive"), ("True", 0.999, "no change"))]
    figure, renderer = _drawn(Plot("compare-two", "t", compare_figure(rows, "new vs old", 0.03)), tmp_path)
    (ax,) = figure.axes
    assert [t.get_text() for t in ax.get_yticklabels()] == ["memory_map=False", "memory_map=True"]
    heading = figure.get_suptitle()
    assert "source=fanniemae_2016Q4" in heading and "memory_map" not in heading  # the shared words, keyed above
    assert all(_inside(figure, renderer, t) for t in (*ax.get_yticklabels(), *ax.texts, figure._suptitle))
    assert key_labels(["a x=1", "a x=1"]) == (["a x=1", "a x=1"], "")  # labels the shared words alone tell apart


def _case(run_id: str, env: str, index: int, params: dict, *, wall: float | None = None,
          counts: float | None = None):
    samples, summary = {}, {}
    if wall is not None:
        samples["wall_s"] = [wall * (1 + 0.01 * i) for i in range(3)]
    if counts is not None:
        samples["instructions"] = [counts + i for i in range(3)]
    summary = {name: summary_stats(values) for name, values in samples.items()}
    case_id = "c" + "".join(str(v) for v in params.values())
    return make_result(run_id=run_id, result_id=f"{run_id}-{env}-{case_id}-{index}", benchmark="file-read",
                       case_id=case_id, env_name=env, process_index=index, params=params, engine="pyarrow",
                       samples=samples, summary=summary,
                       inputs={"data": {"size_bytes": 1_000_000}},
                       measure={"metrics": ["instructions"]} if wall is None else {})


E5_PARAMS = {"format": "parquet", "codec": "uncompressed", "engine": "pyarrow", "source": "fanniemae_2016Q4",
             "rows": 20000, "threads": 1, "output": "arrow_table", "memory_map": False, "allocator": "default",
             "cache": "warm"}


def test_an_instructions_only_run_draws_counts_not_an_empty_time_plot(tmp_path):
    results = [_case("r1", "default", i, E5_PARAMS, counts=5.7e7) for i in range(2)]
    plots = make_plots(summarize_cases(results), make_run(run_id="r1"))
    assert [p.key for p in plots] == ["file-read-instructions"], [p.key for p in plots]
    figure, _ = _drawn(plots[0], tmp_path)
    (ax,) = figure.axes
    assert "instructions" in ax.get_xlabel() and "(M)" in ax.get_xlabel()
    assert [t.get_text() for t in ax.texts] == ["57 M"] or [t.get_text() for t in ax.texts][0].endswith(" M")
    assert ax.get_xlim()[1] > 50, "bars of the counts, not an empty axis of ±0.08 s"


def test_environments_share_one_plot_that_compares_them(tmp_path):
    results = [_case("r2", env, i, {**E5_PARAMS, "memory_map": mm}, wall=wall * (1.1 if env == "new" else 1))
               for env in ("old", "new") for i in range(2) for mm, wall in ((False, 0.03), (True, 0.02))]
    run = make_run(run_id="r2", envs=[{"name": "old"}, {"name": "new"}])
    plots = make_plots(summarize_cases(results), run)
    assert [p.key for p in plots] == ["file-read-time"], [p.key for p in plots]  # not one E5 plot per environment
    figure, renderer = _drawn(plots[0], tmp_path)
    (ax,) = figure.axes
    (legend,) = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == ["old", "new"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["memory_map=False", "memory_map=True"]
    assert len(ax.patches) == 4  # two cases × two environments
    legend_box, axes_box = legend.get_window_extent(renderer), ax.get_tightbbox(renderer)
    assert legend_box.y1 <= axes_box.y0 + 1, "the legend sits below the axes and their labels, not on them"


def test_e5_legend_names_only_what_was_measured(tmp_path):
    results = [_case("r3", "default", i, E5_PARAMS, wall=0.03) for i in range(2)]
    plots = {p.key: p for p in make_plots(summarize_cases(results), make_run(run_id="r3"))}
    figure, _ = _drawn(plots["e5-formats"], tmp_path)
    labels = [t.get_text() for legend in figure.legends for t in legend.get_texts()]
    assert labels == ["read → Arrow table", "file size"], labels

"""What every `colbench run` imports leaves out scipy.stats and matplotlib: about a second of CPU each command paid
before any work (a run of one environment computes no statistic of scipy's; printing its claims draws no figure).
scipy.stats comes with the first statistic (analysis/scipy_stats.py), matplotlib with the report's claims figure
(report/claims_figure.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ANALYSIS = ("claims", "chain", "sequential", "t_tests", "rank_tests", "power", "verdicts", "comparison", "history")
#: what `colbench run` imports before it measures and to print its results and claims (cli/common.py show_claims)
RUN = ("colbench.cli.main", "colbench.cli.common", "colbench.cli.run_cmd", "colbench.app.run", "colbench.app.claims",
       "colbench.report.claims", "colbench.report.terminal")


def _python(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_what_a_run_imports_leaves_out_scipy_stats_and_matplotlib():
    code = ("import importlib, sys\n"
            f"for name in {RUN!r} + tuple('colbench.analysis.' + m for m in {ANALYSIS!r}):\n"
            "    importlib.import_module(name)\n"
            "print('scipy.stats' in sys.modules, 'matplotlib' in sys.modules)\n")
    assert _python(code) == ["False", "False"]


def test_the_first_statistic_imports_scipy_stats_and_the_claims_figure_matplotlib():
    code = ("import sys\n"
            "from colbench.analysis.scipy_stats import stats\n"
            "print(round(float(stats.norm.isf(0.025)), 4), stats.t is sys.modules['scipy.stats'].t)\n"
            "import colbench.report.claims_figure\n"
            "print('matplotlib' in sys.modules)\n")
    assert _python(code) == ["1.96", "True", "True"]


@pytest.mark.slow
def test_a_run_of_placebo_imports_none_of_scipy_stats_matplotlib_or_pyarrow(tmp_path):
    """The whole command, as a user runs it: a plan without input files does not import the data cache either (its
    pyarrow), and the run's results and claims print without a statistic of scipy's or a figure."""
    env = {**os.environ, "COLBENCH_HOME": str(tmp_path / "home")}
    env.pop("COLBENCH_STORE", None)
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "colbench", "run", "placebo", "--param",
                           "duration=0", "--processes", "2", "--iterations", "1", "--warmup", "0"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "colbench.app.run" in imported and "colbench.cli.common" in imported  # the importtime lines are there
    assert not {"scipy.stats", "matplotlib", "pyarrow"} & imported
